"""README's Python examples run as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
# the top-level modules of README's examples that an optional extra brings (README's own run has only `dev`)
EXTRA_OF = {"sb3_contrib": "train", "stable_baselines3": "train", "torch": "train"}


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", README.read_text(encoding="utf-8"), re.S | re.M)


def _imported(code: str) -> list[str]:
    return re.findall(r"^(?:from|import) (\w+)", code, re.M)


def test_readme__every_extra_module_is_known():
    """A README example that imports an optional library names its extra here, so that it skips without it."""
    dev = {"numpy", "saboteur_env", "gymnasium", "pettingzoo", "__future__"}
    assert {m for code in _blocks("python") for m in _imported(code)} - dev <= set(EXTRA_OF)


@pytest.mark.parametrize("index", range(len(_blocks("python"))))
def test_readme__python_examples_run(index: int) -> None:
    code = _blocks("python")[index]
    for module in _imported(code):
        if module in EXTRA_OF:
            extra = EXTRA_OF[module]
            pytest.importorskip(module, reason=f"needs the {extra} extra (pip install -e '.[{extra}]')")
    exec(compile(code, f"README.md python block {index}", "exec"), {})
