"""Print the tests that the last pytest run skipped for a missing optional extra, one node id a line.

tests/conftest.py stores them in pytest's cache (key ``saboteur/skipped-for-extras``); .ci/run runs them again once the
extras are installed. ``--none`` exits non-zero when any is listed (after that run, none may still skip).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

path = Path(__file__).resolve().parent.parent / ".pytest_cache/v/saboteur/skipped-for-extras"
if not path.is_file():
    sys.exit(f"{path} is missing: pytest did not run from the repository root, or tests/conftest.py did not record")
skipped = json.loads(path.read_text(encoding="utf-8"))
if "--none" in sys.argv[1:]:
    if skipped:
        sys.exit("tests still skipped for a missing extra after installing every extra:\n" + "\n".join(skipped))
else:
    print("\n".join(skipped))
