"""The agent ladder: greedy, honest / overt, suspicious / covert, bayes, and the cheating oracles.

Every agent reads its observation through :class:`saboteur_env.PlayerView`, follows the public events with a
:class:`~agents.base.tracker.ViewTracker` (so it knows the tile distance to each goal before and after every event),
and scores its legal actions:

* ``greedy`` - role-blind builder: repairs itself, uses maps, builds to cut the expected tile distance to the
  gold, never targets others.
* ``honest`` (miner) - greedy, plus repairs anyone and clears dead ends with rockfalls; no beliefs, no breaks.
* ``overt`` (saboteur) - sabotages from turn 1: blocking placements on the best route, rockfalls that lengthen it,
  breaks on other seats.
* ``suspicious`` (miner) - honest with a :class:`~agents.base.beliefs.SuspicionModel`: breaks the top suspect above
  ``break_threshold``, repairs only players below ``trust_threshold``, builds towards its belief about the gold.
* ``covert`` (saboteur) - estimates how suspicious it looks with a public model of itself; plays plausibly while
  the tunnel is far from the gold and it is unexposed, then turns overt (``close``, ``exposed`` thresholds).
* ``bayes`` - suspicious / covert decisions on an exact :class:`~agents.base.beliefs.BayesModel` posterior.
* ``role_oracle`` / ``gold_oracle`` - CHEATING upper bounds that read hidden roles / the gold goal from the
  environment's ``state()`` (bind it with ``bind_state``); never mix them into ratings.

Agents expose ``role_beliefs() -> {seat: P(saboteur)}`` and ``gold_beliefs() -> [P(gold in slot g)]`` where they
have beliefs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np
from numpy.typing import NDArray

from agents.base.analysis import DEAD_END_ORIENTATION, INF, ONWARD, expectation, placement_outcomes
from agents.base.beliefs import BayesModel, BeliefModel, SuspicionModel
from agents.base.tracker import ViewTracker, analysed, known_gold
from saboteur_env import ActionType, GameConfig, PlayerView, action_layout
from saboteur_env.base.cards import KIND_GOAL_GOLD, KIND_MAP, KIND_ROCKFALL, SHAPE_SPECS, SHAPES, Role
from saboteur_env.base.observation import decode_state
from saboteur_env.base.state import EventType

CAP = 20  # distances are capped so that unreachable goals do not dominate expectations
DEAD_END_SHAPE = np.array([SHAPE_SPECS[s.kind].dead_end for s in SHAPES] + [False])  # index -1: no card


class LadderAgent:
    """Shared machinery: tracking, beliefs, vectorised evaluation of the legal actions."""

    name = "ladder"
    uses_beliefs = False

    def __init__(self, config: GameConfig) -> None:
        self.config = config
        self.layout = action_layout(config)
        self.rng = np.random.default_rng()
        self.seat = 0
        self.beliefs: BeliefModel | None = None
        self.public: SuspicionModel | None = None

    # ---- protocol ----
    def reset(self, seat: int, num_players: int, seed: int | None) -> None:
        if num_players != self.config.num_players:
            raise ValueError(f"num_players={num_players} does not match the config ({self.config.num_players})")
        self.rng = np.random.default_rng(seed)
        self.seat = seat
        self.tracker = ViewTracker(self.config, seat)
        self.beliefs = self.make_beliefs()
        self.public = None
        self._round = -1
        self._peeks_told: set[int] = set()

    def make_beliefs(self) -> BeliefModel | None:
        return None

    def act(self, observation: NDArray[np.float32], action_mask: NDArray[np.int8]) -> int:
        return self.act_view(PlayerView.from_observation(observation, self.config), action_mask)

    def act_view(self, view: PlayerView, action_mask: NDArray[np.int8]) -> int:
        """``act`` for an already decoded view (composites decode once for both of their policies)."""
        self._follow(view)
        legal = np.flatnonzero(action_mask)
        if legal.size == 0:
            raise ValueError("act() needs a mask with at least one legal action")
        return int(self.choose(view, legal))

    def observe_view(self, view: PlayerView) -> None:
        """Follow the game without acting (a role-dispatching composite calls this on its idle policy)."""
        self._follow(view)

    def role_beliefs(self) -> dict[int, float] | None:
        if self.beliefs is None:
            return None
        return {s: float(p) for s, p in enumerate(self.beliefs.p_saboteur())}

    def gold_beliefs(self) -> list[float] | None:
        return None if self.beliefs is None else [float(p) for p in self.beliefs.p_gold()]

    # ---- following the game ----
    def _new_round(self, view: PlayerView) -> None:
        self._round = view.round
        self._peeks_told = set()
        if self.beliefs is not None:
            self.beliefs.reset_round(self.seat, view.role)
        if self.public is not None:
            self.public.reset_round(None, None)

    def _follow(self, view: PlayerView) -> None:
        events = self.tracker.update(view)
        if self._round < 0:
            self._new_round(view)
        for ev in events:
            if ev.type == EventType.ROUND_END:
                self._new_round(view)
                continue
            for model in (self.beliefs, self.public):
                if model is not None:
                    model.observe(ev)
        if view.round != self._round:
            self._new_round(view)
        if self.beliefs is not None:
            for slot in np.flatnonzero(view.peeked[0]):
                if slot not in self._peeks_told and view.goal_knowledge[slot] is not None:
                    self.beliefs.observe_peek(int(slot), view.goal_knowledge[slot] == "gold")
                    self._peeks_told.add(int(slot))

    # ---- evaluation helpers ----
    def p_gold(self, view: PlayerView) -> NDArray[np.float64]:
        if self.beliefs is not None:
            return self.beliefs.p_gold()
        return known_gold(view)

    def expected_distance(self, view: PlayerView) -> float:
        return float(expectation(np.minimum(self.tracker.board.distance, CAP), self.p_gold(view)))

    def placements(self, view: PlayerView, legal: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """Legal placement ids and the expected tile distance to the gold after each."""
        lay = self.layout
        ids = legal[lay.type_arr[legal] == ActionType.PLACE]
        if ids.size == 0:
            return ids, np.zeros(0)
        out = placement_outcomes(self.tracker.board, lay.arg_arr[ids], lay.orientation_arr[ids])
        return ids, expectation(np.minimum(out, CAP), self.p_gold(view))

    def rockfall_effects(
        self, view: PlayerView, legal: NDArray[np.int64], dead_ends_only: bool = False
    ) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """Legal rockfall ids and the expected tile distance to the gold after each removal.

        Only cards that matter are evaluated: connected cards (their removal can cut the route) or, with
        ``dead_ends_only``, dead ends (their removal can open it).
        """
        lay = self.layout
        ids = legal[lay.type_arr[legal] == ActionType.ROCKFALL]
        board = self.tracker.board
        cells = lay.arg_arr[ids]
        if dead_ends_only:
            ids = ids[DEAD_END_SHAPE[board.shape[cells]]]
        else:
            ids = ids[board.reach[cells] > 0]
            if ids.size > 3:  # the tunnel's tip matters most: keep the 3 cards nearest the likely gold
                geo = board.geo
                cells = lay.arg_arr[ids]
                pg = self.p_gold(view)
                near = sum(
                    pg[g] * (np.abs(geo.row_of[cells] - geo.row_of[gc]) + np.abs(geo.col_of[cells] - geo.col_of[gc]))
                    for g, gc in enumerate(geo.goal_cells)
                )
                ids = ids[np.argsort(near, kind="stable")[:3]]
        after = np.zeros(ids.size)
        pg = self.p_gold(view)
        for i, a in enumerate(ids):
            board = self.tracker.board.copy()
            board.remove(int(lay.arg_arr[a]))
            after[i] = expectation(np.minimum(analysed(board).distance, CAP), pg)
        return ids, after

    def of_type(self, legal: NDArray[np.int64], *types: ActionType) -> NDArray[np.int64]:
        t = self.layout.type_arr[legal]
        keep = t == types[0]
        for other in types[1:]:
            keep |= t == other
        return legal[keep]

    def pick(self, ids: NDArray[np.int64], scores: NDArray[np.float64] | None = None) -> int:
        """The best-scoring id (ties broken by the agent's generator)."""
        if scores is None:
            return int(self.rng.choice(ids))
        best = np.flatnonzero(scores >= scores.max() - 1e-9)
        return int(ids[self.rng.choice(best)])

    def seat_of(self, action_ids: NDArray[np.int64]) -> NDArray[np.int64]:
        return (self.seat + self.layout.target_arr[action_ids]) % self.config.num_players

    # ---- shared moves ----
    def repair_self(self, legal: NDArray[np.int64]) -> int | None:
        ids = self.of_type(legal, ActionType.REPAIR, ActionType.DOUBLE_REPAIR)
        ids = ids[self.layout.target_arr[ids] == 0]
        return self.pick(ids) if ids.size else None

    def use_map(self, view: PlayerView, legal: NDArray[np.int64]) -> int | None:
        pg = self.p_gold(view)
        if pg.max() > 0.99:
            return None
        ids = self.of_type(legal, ActionType.MAP)
        ids = ids[[view.goal_knowledge[int(self.layout.arg_arr[a])] is None for a in ids]] if ids.size else ids
        if ids.size == 0:
            return None
        dist = np.minimum(self.tracker.board.distance, CAP)
        return self.pick(ids, -dist[self.layout.arg_arr[ids]].astype(float))  # the goal the tunnel nears first

    def build(self, view: PlayerView, legal: NDArray[np.int64], min_gain: float = 0.5) -> int | None:
        ids, after = self.placements(view, legal)
        if ids.size == 0:
            return None
        gain = self.expected_distance(view) - after
        orient = self.layout.orientation_arr[ids]
        branching = np.array([bin(int(b)).count("1") for b in ONWARD[orient, 15]]) * 0.01
        score = gain + branching - DEAD_END_ORIENTATION[orient] * 10
        if score.max() < min_gain:
            return None
        return self.pick(ids, score)

    def block(self, view: PlayerView, legal: NDArray[np.int64], min_harm: float = 0.5) -> int | None:
        """The placement or rockfall that lengthens the expected route to the gold the most."""
        now = self.expected_distance(view)
        pids, pafter = self.placements(view, legal)
        rids, rafter = self.rockfall_effects(view, legal)
        ids = np.concatenate([pids, rids])
        harm = np.concatenate([pafter, rafter]) - now
        if ids.size == 0 or harm.max() < min_harm:
            return None
        return self.pick(ids, harm)

    def clear_dead_end(self, view: PlayerView, legal: NDArray[np.int64]) -> int | None:
        rids, rafter = self.rockfall_effects(view, legal, dead_ends_only=True)
        if rids.size == 0:
            return None
        gain = self.expected_distance(view) - rafter
        return self.pick(rids, gain) if gain.max() > 0.5 else None

    def discard(self, legal: NDArray[np.int64], worst_first: list[int]) -> int:
        """Discard following a preference over card kinds (earlier = discard first)."""
        ids = self.of_type(legal, ActionType.DISCARD)
        if ids.size == 0:
            return self.pick(legal)
        kinds = self.layout.kind_arr[ids]
        rank = {k: i for i, k in enumerate(worst_first)}
        score = -np.array([rank.get(int(k), len(rank)) for k in kinds], dtype=float)
        return self.pick(ids, score)

    def choose(self, view: PlayerView, legal: NDArray[np.int64]) -> int:
        raise NotImplementedError

    @staticmethod
    def first_of(moves: Iterable[Callable[[], int | None]], fallback: Callable[[], int]) -> int:
        """The first move (tried in order, lazily) that applies, else the fallback."""
        for move in moves:
            a = move()
            if a is not None:
                return a
        return fallback()


# Discard orders by card kind (0-15 path cards, 16-26 action cards).
_DEAD_ENDS = list(range(7, 16))
_MINER_DISCARD = [*_DEAD_ENDS, 16, 17, 18, KIND_ROCKFALL, 4, 3, 6, 5, 1, 2, 19, 20, 21, 22, 23, 24, KIND_MAP, 0]
_SABOTEUR_DISCARD = [0, 1, 2, 3, 4, 5, 6, 19, 20, 21, 22, 23, 24, KIND_MAP, *_DEAD_ENDS, 16, 17, 18, KIND_ROCKFALL]


class GreedyAgent(LadderAgent):
    """Role-blind builder."""

    name = "greedy"

    def choose(self, view: PlayerView, legal: NDArray[np.int64]) -> int:
        for move in (self.repair_self(legal), self.use_map(view, legal), self.build(view, legal)):
            if move is not None:
                return move
        return self.discard(legal, _MINER_DISCARD)


class HonestAgent(GreedyAgent):
    """Role-aware gold-digger without beliefs: builds, repairs anyone, clears dead ends; never breaks."""

    name = "honest"

    def trusted(self, seats: NDArray[np.int64]) -> NDArray[np.bool_]:
        return np.ones(seats.size, dtype=bool)

    def repair_others(self, legal: NDArray[np.int64]) -> int | None:
        ids = self.of_type(legal, ActionType.REPAIR, ActionType.DOUBLE_REPAIR)
        ids = ids[self.layout.target_arr[ids] != 0]
        ids = ids[self.trusted(self.seat_of(ids))] if ids.size else ids
        return self.pick(ids) if ids.size else None

    def break_suspect(self, legal: NDArray[np.int64]) -> int | None:
        return None

    def choose(self, view: PlayerView, legal: NDArray[np.int64]) -> int:
        moves = (
            lambda: self.repair_self(legal),
            lambda: self.break_suspect(legal),
            lambda: self.use_map(view, legal),
            lambda: self.build(view, legal),
            lambda: self.repair_others(legal),
            lambda: self.clear_dead_end(view, legal),
        )
        return self.first_of(moves, lambda: self.discard(legal, _MINER_DISCARD))


class OvertSaboteur(LadderAgent):
    """Sabotages openly from the first turn."""

    name = "overt"

    def break_targets(self, ids: NDArray[np.int64]) -> NDArray[np.float64]:
        """Preference over break actions: anyone but me, the next seats first (they act soonest)."""
        offsets = self.layout.target_arr[ids]
        return np.where(offsets == 0, -INF, -offsets.astype(float))

    def breaks(self, legal: NDArray[np.int64]) -> int | None:
        ids = self.of_type(legal, ActionType.BREAK)
        if ids.size == 0:
            return None
        score = self.break_targets(ids)
        return self.pick(ids, score) if score.max() > -INF else None

    def choose(self, view: PlayerView, legal: NDArray[np.int64]) -> int:
        close = self.expected_distance(view) <= 3
        order = (
            (lambda: self.block(view, legal), lambda: self.breaks(legal))
            if close
            else (lambda: self.breaks(legal), lambda: self.block(view, legal))
        )
        moves = (*order, lambda: self.repair_self(legal), lambda: self.use_map(view, legal))
        return self.first_of(moves, lambda: self.discard(legal, _SABOTEUR_DISCARD))


class SuspiciousMiner(HonestAgent):
    """Honest digger that breaks the top suspect and repairs only trusted players."""

    name = "suspicious"

    def __init__(self, config: GameConfig, break_threshold: float = 0.6, trust_threshold: float = 0.3) -> None:
        super().__init__(config)
        self.break_threshold, self.trust_threshold = break_threshold, trust_threshold

    def make_beliefs(self) -> BeliefModel:
        return SuspicionModel(self.config.num_players, self.tracker.board.geo.goal_cells)

    def suspicion(self) -> NDArray[np.float64]:
        assert self.beliefs is not None
        return self.beliefs.p_saboteur()

    def trusted(self, seats: NDArray[np.int64]) -> NDArray[np.bool_]:
        return self.suspicion()[seats] < self.trust_threshold

    def break_suspect(self, legal: NDArray[np.int64]) -> int | None:
        ids = self.of_type(legal, ActionType.BREAK)
        ids = ids[self.layout.target_arr[ids] != 0] if ids.size else ids
        if ids.size == 0:
            return None
        p = self.suspicion()[self.seat_of(ids)]
        return self.pick(ids, p) if p.max() > self.break_threshold else None


class CovertSaboteur(OvertSaboteur):
    """Plays plausibly while far from the gold and unexposed, then sabotages like ``overt``."""

    name = "covert"

    def __init__(self, config: GameConfig, close: float = 3.0, exposed: float = 0.6, bluff: float = 0.5) -> None:
        super().__init__(config)
        self.close, self.exposed, self.bluff = close, exposed, bluff

    def public_model(self) -> BeliefModel:
        return SuspicionModel(self.config.num_players, self.tracker.board.geo.goal_cells)

    def reset(self, seat: int, num_players: int, seed: int | None) -> None:
        super().reset(seat, num_players, seed)
        self.public = self.public_model()

    def self_suspicion(self) -> float:
        assert self.public is not None
        return float(self.public.p_saboteur()[self.seat])

    def choose(self, view: PlayerView, legal: NDArray[np.int64]) -> int:
        if self.expected_distance(view) <= self.close or self.self_suspicion() > self.exposed:
            return super().choose(view, legal)
        # Far from the gold and unexposed: look like a digger without helping much.
        ids, after = self.placements(view, legal)
        if ids.size:
            pg = self.p_gold(view)
            known_stone = pg < 1e-9
            gain = self.expected_distance(view) - after
            orient = self.layout.orientation_arr[ids]
            ok = ~DEAD_END_ORIENTATION[orient]
            if known_stone.any():  # building towards a goal I know is stone looks helpful and costs nothing
                board = self.tracker.board
                dist_stone = placement_outcomes(board, self.layout.arg_arr[ids], orient)[:, known_stone].min(axis=1)
                helps_stone = (dist_stone < board.distance[known_stone].min()) & ok & (gain <= 0.5)
                if helps_stone.any():
                    return self.pick(ids[helps_stone])
            small = ok & (gain <= 1.0) & (gain >= 0)
            if small.any() and self.rng.random() < self.bluff:
                return self.pick(ids[small], -gain[small])
        return self.discard(legal, _SABOTEUR_DISCARD)


class BayesMiner(SuspiciousMiner):
    name = "bayes"

    def make_beliefs(self) -> BeliefModel:
        return BayesModel(self.config.num_players, self.tracker.board.geo.goal_cells)


class BayesSaboteur(CovertSaboteur):
    name = "bayes"

    def make_beliefs(self) -> BeliefModel:
        return BayesModel(self.config.num_players, self.tracker.board.geo.goal_cells)

    def public_model(self) -> BeliefModel:
        return BayesModel(self.config.num_players, self.tracker.board.geo.goal_cells)


# ---- cheating upper bounds ----------------------------------------------------------------------------------------
class _Oracle:
    oracle = True  # declared: the experiments hand the hidden state to declared oracles only (agents.agent)

    def bind_state(self, state_fn: Callable[[], NDArray[np.float32]]) -> None:
        """Give the oracle the environment's ``state()`` (hidden information): this is what makes it cheat."""
        self._state_fn = state_fn

    def hidden(self) -> dict:
        if not hasattr(self, "_state_fn"):
            raise RuntimeError(f"{type(self).__name__} needs bind_state(env.state) before acting")
        return decode_state(self._state_fn(), self.config)  # type: ignore[attr-defined]


class RoleOracle(_Oracle, SuspiciousMiner):
    """CHEATING: a suspicious digger whose suspicion is the true role of every seat."""

    name = "role_oracle"

    def suspicion(self) -> NDArray[np.float64]:
        return np.array(self.hidden()["roles"], dtype=float)


class RoleOracleSaboteur(_Oracle, OvertSaboteur):
    """CHEATING: an overt saboteur that breaks gold-diggers only."""

    name = "role_oracle"

    def break_targets(self, ids: NDArray[np.int64]) -> NDArray[np.float64]:
        roles = np.array(self.hidden()["roles"])
        return np.where(roles[self.seat_of(ids)] == Role.GOLD_DIGGER, 0.0, -INF)


class GoldOracle(_Oracle, GreedyAgent):
    """CHEATING: a greedy builder that knows where the gold is."""

    name = "gold_oracle"

    def p_gold(self, view: PlayerView) -> NDArray[np.float64]:
        return np.array([1.0 if k == KIND_GOAL_GOLD else 0.0 for k in self.hidden()["goal_kinds"]])
