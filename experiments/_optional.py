"""Optional dependencies: import one or exit with a message naming the extra that installs it."""

from __future__ import annotations

import importlib
from types import ModuleType

# What each extra of pyproject.toml provides (the top-level modules a command may need).
EXTRAS: dict[str, tuple[str, ...]] = {
    "eval": ("openskill", "matplotlib"),
    "train": ("torch", "stable_baselines3", "sb3_contrib"),
    "ray": ("ray", "torch"),
}


def require(module: str, extra: str, what: str = "this command") -> ModuleType:
    """Import ``module``; if it (or one of its own imports) is missing, exit with the ``pip install`` to run.

    ``what`` names the feature for the message, e.g. ``require("openskill.models", "eval", "report ratings")``.
    """
    if extra not in EXTRAS:
        raise ValueError(f"unknown extra {extra!r}; known: {', '.join(EXTRAS)}")
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as err:
        missing = err.name or module
        raise SystemExit(
            f"{what} needs the optional dependency {missing!r} (the '{extra}' extra): pip install -e '.[{extra}]'"
        ) from err
