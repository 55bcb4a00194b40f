"""Belief features: what a learned base-game policy may read besides its observation (``features: "bayes"``).

An observation shows the last ``history_length`` public events; who is a saboteur rests on the whole round. A
policy file whose header names ``features = "bayes"`` also reads a vector that a :class:`BeliefFeatures` follower
builds from the seat's own sequence of observations, and from nothing else: the same exact Bayes models the
``bayes`` and ``expert`` agents keep (:class:`agents.base.beliefs.BayesModel`), fed with the seat's view. So the
features carry no information the seat does not have; they summarise its past.

Layout (``P`` players; seat offsets relative to the observing seat, offset 0 = itself, as in the observation):

================  =======  ==================================================================================
name              shape    content
================  =======  ==================================================================================
``p_saboteur``    ``(P,)`` the seat's posterior P(seat offset k is a saboteur) (its own role is known: 0 or 1)
``p_public``      ``(P,)`` a public observer's P(saboteur) (what the table can infer, e.g. about oneself)
``p_gold``        ``(3,)`` the seat's P(gold under goal slot g) (reveals and its own map results)
``distance``      ``(3,)`` placements still needed from the tunnel to goal slot g, ``min(d, 20) / 20``
================  =======  ==================================================================================

The follower must see every observation of its seat in order, from the seat's first decision of the game (the
learned agent calls :meth:`BeliefFeatures.update` at every decision; ``experiments.train.imitate`` replays each seat's
recorded decisions in order, see :func:`features_of_sequence`).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from agents.base.beliefs import BayesModel, BeliefModel
from agents.base.ladder import CAP, LadderAgent
from saboteur_env import GameConfig, PlayerView

NAMES = ("bayes",)  # valid ``features`` header values ("" = none)


def feature_size(name: str, config: GameConfig) -> int:
    """Entries of feature set ``name`` ("" = none, 0) for ``config``; ValueError naming the valid sets."""
    if name == "":
        return 0
    if name not in NAMES:
        raise ValueError(f"features={name!r} is unknown; valid: '' (none), {', '.join(map(repr, NAMES))}")
    if config.game != "base":
        raise ValueError(f"features={name!r} covers the base game only, not game={config.game!r}")
    return 2 * config.num_players + 6


class _Follower(LadderAgent):
    """A ladder agent that never acts: its tracking and its two Bayes models (own and public)."""

    name = "belief-features"

    def make_beliefs(self) -> BeliefModel:
        return BayesModel(self.config.num_players, self.tracker.board.geo.goal_cells)

    def reset(self, seat: int, num_players: int, seed: int | None) -> None:
        super().reset(seat, num_players, seed)
        self.public = BayesModel(num_players, self.tracker.board.geo.goal_cells)  # type: ignore[assignment]


class BeliefFeatures:
    """The ``bayes`` feature vector of one seat, updated with each of its views (see the module docstring)."""

    def __init__(self, config: GameConfig, name: str = "bayes") -> None:
        if not name:
            raise ValueError("BeliefFeatures needs a feature set; valid: " + ", ".join(map(repr, NAMES)))
        self.size = feature_size(name, config)
        self.config = config
        self.follower = _Follower(config)
        self.seat = 0
        self.last: NDArray[np.float32] | None = None  # the features after the latest view

    def reset(self, seat: int) -> None:
        self.seat, self.last = seat, None
        self.follower.reset(seat, self.config.num_players, 0)  # it never draws

    def update(self, view: PlayerView) -> NDArray[np.float32]:
        """Follow ``view`` (the seat's next observation) and return the features after it."""
        f = self.follower
        f.observe_view(view)
        assert f.beliefs is not None and f.public is not None
        order = (self.seat + np.arange(self.config.num_players)) % self.config.num_players
        self.last = np.concatenate([
            f.beliefs.p_saboteur()[order], f.public.p_saboteur()[order], f.beliefs.p_gold(),
            np.minimum(f.tracker.board.distance, CAP) / CAP,
        ]).astype(np.float32)  # fmt: skip
        return self.last


def features_of_sequence(config: GameConfig, seat: int, observations: NDArray[np.float32],
                         name: str = "bayes") -> NDArray[np.float32]:  # fmt: skip
    """The features after each of one seat's observations of one game, in order: ``(len(observations), F)``."""
    feats = BeliefFeatures(config, name)
    feats.reset(seat)
    out = np.zeros((len(observations), feats.size), dtype=np.float32)
    for i, obs in enumerate(observations):
        out[i] = feats.update(PlayerView.from_observation(obs, config))
    return out
