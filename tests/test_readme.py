"""README's Python examples run as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", README.read_text(encoding="utf-8"), re.S | re.M)


@pytest.mark.parametrize("index", range(len(_blocks("python"))))
def test_readme__python_examples_run(index: int) -> None:
    exec(compile(_blocks("python")[index], f"README.md python block {index}", "exec"), {})

