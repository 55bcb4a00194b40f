"""A trained MaskablePPO policy as a ladder agent (``make_agent("ppo:path/to/model.zip", config)``).

Needs the ``train`` extra (``pip install -e ".[train]"``; torch from the CPU wheel ``torch==2.13.0``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from saboteur_env import GameConfig

_MODELS: dict[tuple[str, int], object] = {}  # (path, mtime_ns) -> loaded model; one load per process


def load_model(path: Path):
    """The MaskablePPO model at ``path``, loaded once per process (inference only: it is never trained further)."""
    from sb3_contrib import MaskablePPO

    key = (str(path.resolve()), path.stat().st_mtime_ns)
    if key not in _MODELS:
        _MODELS[key] = MaskablePPO.load(path, device="cpu")
    return _MODELS[key]


class PPOAgent:
    """Plays the greedy (deterministic) or sampled action of a saved sb3-contrib MaskablePPO model."""

    def __init__(self, path: str | Path, config: GameConfig, deterministic: bool = True) -> None:
        try:
            import sb3_contrib  # noqa: F401
        except ImportError as err:  # pragma: no cover - depends on the optional extra
            raise ImportError("ppo agents need the 'train' extra: pip install -e '.[train]'") from err
        path = Path(path)
        if not path.exists():
            raise FileNotFoundError(f"no model at {path}")
        self.model = load_model(path)
        expected = self.model.observation_space.shape
        from saboteur_env import observation_layout

        size = observation_layout(config).size
        if expected != (size,):
            raise ValueError(f"model {path} expects observations of shape {expected}; {config} gives ({size},)")
        self.config = config
        self.name = f"ppo:{path.name}"
        self.deterministic = deterministic

    def reset(self, seat: int, num_players: int, seed: int | None) -> None:
        self.model.set_random_seed(seed)

    def act(self, observation: NDArray[np.float32], action_mask: NDArray[np.int8]) -> int:
        action, _ = self.model.predict(observation, action_masks=action_mask.astype(bool),
                                       deterministic=self.deterministic)  # fmt: skip
        return int(action)
