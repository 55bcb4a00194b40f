"""Console scripts ``saboteur-web``, ``saboteur-play`` and ``saboteur-tournament`` for a clone of the repository.

The browser table, the terminal game and the tournament live in the repository's ``experiments/`` (research code
next to the agents, not in the wheel). An editable install (``pip install -e ".[web]"``) puts these commands on the
PATH; they run the repository's modules, exactly as ``python -m experiments.web`` etc. do from its root. From a
wheel (no repository) they exit with a message saying so.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from pathlib import Path

_ROOT = Path(__file__).resolve().parents[1]  # the repository root in an editable install


def _run(module: str) -> Callable[[], int]:
    def main() -> int:
        if not (_ROOT / "experiments" / "__init__.py").is_file() or not (_ROOT / "agents").is_dir():
            print(f"error: this command runs {module} from a clone of the saboteur-env repository; install one "
                  f"with  git clone ... && pip install -e \".[web]\"  (found no experiments/ next to {_ROOT})",
                  file=sys.stderr)  # fmt: skip
            return 2
        if str(_ROOT) not in sys.path:
            sys.path.insert(0, str(_ROOT))
        result = importlib.import_module(module).main(sys.argv[1:])
        return int(result or 0)

    main.__name__ = main.__qualname__ = f"main_{module.replace('.', '_')}"
    return main


web = _run("experiments.web.__main__")
play = _run("experiments.play")
tournament = _run("experiments.tournament.cli")
