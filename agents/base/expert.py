"""Stronger scripted agents for the base game: ``planner`` (gold-digger), ``blocker`` (saboteur), ``expert`` (both).

Both plan on :mod:`agents.base.planner` distances (placements still needed, with edge matching and the cards still
unseen) and keep an exact :class:`~agents.base.beliefs.BayesModel` over roles and the gold goal, fed only with their
seat's view (public events, own cards, own maps).

``planner`` (miner), in order:

1. repairs itself; 2. finishes: a placement that reaches the believed gold; 3. breaks a believed saboteur (P >= 0.75,
or >= 0.55 once the tunnel is within 4 placements), preferring one whose tools are whole and who acts soonest;
4. maps an *unsettled* goal only (never one revealed, peeked by itself or implied by two known stones), preferring
goals nobody trusted has peeked; 5. places the card that most cuts the expected distance to the gold (the few
best by a cheap estimate, then exactly); 6. rockfalls a card (dead ends first) whose removal shortens the route;
7. repairs a believed gold-digger (P(saboteur) < 0.3); 8. discards the least useful card (dead ends, then maps once
the gold is settled, ...; a card on the best route, a break card while a suspect exists, repairs are kept).

``blocker`` (saboteur): covert while the tunnel is far from the gold (expected distance above 3 + 0.8 (N - 1)
placements: the diggers place about once per seat between its turns) and its public suspicion (a public-observer
Bayes model of itself) is at most 0.6: maps unknown goals, breaks a believed digger only when a public observer
already suspects that digger (P >= 0.3, so the break looks like a digger's), lays cards that look like progress to a
public observer but do not bring its believed gold closer, else discards (keeping dead ends, rockfalls and breaks,
dropping the diggers' best path cards). Once the tunnel is close or it is exposed it blocks where it hurts most: the
placement or rockfall that lengthens the diggers' best route to its believed gold the most (dead ends and cuts near
the goals, by at least 2 placements, or 1 when the gold is one placement away), else breaks the most dangerous digger
(believed digger, tools whole, acting soonest), else any block of at least 1.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from agents.base.analysis import expectation
from agents.base.beliefs import BayesModel, BeliefModel
from agents.base.ladder import CAP, LadderAgent
from agents.base.planner import (
    INF,
    CardCounter,
    available_orientations,
    board_distance,
    boards_distance,
    placed,
    placement_estimates,
    removed,
)
from agents.base.tracker import PublicEvent, ViewTracker, known_gold
from saboteur_env import ActionType, GameConfig, PlayerView
from saboteur_env.base.cards import KIND_MAP, KIND_ROCKFALL, NUM_DECK_KINDS, SHAPE_SPECS, SHAPES
from saboteur_env.base.state import EventType

TOP_K = 6  # candidates checked exactly after the cheap estimate
ROCKFALL_K = 8
_DEAD_END_KIND: NDArray[np.bool_] = np.array([bool(getattr(SHAPE_SPECS[k], "dead_end", False))
                                              for k in range(NUM_DECK_KINDS)])  # fmt: skip
_SHAPE_DEAD_END: NDArray[np.bool_] = np.append(_DEAD_END_KIND[np.minimum([s.kind for s in SHAPES], 26)]
                                               & (np.array([s.kind for s in SHAPES]) < 16), False)  # fmt: skip
_PATH_VALUE = np.array([5.0, 4.0, 4.0, 3.0, 3.0, 3.0, 3.0] + [0.0] * 9)  # crossroads > T > straights, curves


class _CountingTracker(ViewTracker):
    """A view tracker that also tells a :class:`CardCounter` which cards went public (per round)."""

    def __init__(self, config: GameConfig, seat: int, counter: CardCounter) -> None:
        super().__init__(config, seat)
        self.counter = counter

    def update(self, view: PlayerView) -> list[PublicEvent]:
        events = super().update(view)
        for ev in events:
            if ev.type == EventType.ROUND_END:
                self.counter.reset()
            elif ev.type == EventType.ROCKFALL:
                self.counter.played(ev.kind)
                self.counter.played(ev.arg)  # the removed path card
            elif ev.type in (EventType.BREAK, EventType.REPAIR, EventType.MAP):
                self.counter.played(ev.kind)
        return events


class _Context:
    """What one decision needs about the board: maze, reach, available orientations and distances."""

    def __init__(self, agent: ExpertAgent, view: PlayerView) -> None:
        board = agent.tracker.board
        self.shape = board.shape
        self.reach = board.reach
        self.unseen = agent.counter.unseen(self.shape, view.hand)
        self.avail = available_orientations(self.unseen + view.hand[:NUM_DECK_KINDS])
        self.dist = board_distance(agent.config, self.shape, self.avail)
        self.weights = agent.goal_weights(view)
        self.expected = self.value(self.dist)

    def value(self, dist: NDArray[np.int64]) -> float:
        return float(expectation(np.minimum(dist, CAP), self.weights))


class ExpertAgent(LadderAgent):
    """Shared machinery of ``planner`` and ``blocker``: Bayes beliefs, card counting, planned distances."""

    name = "expert"

    def make_beliefs(self) -> BeliefModel:
        return BayesModel(self.config.num_players, self.tracker.board.geo.goal_cells)

    def reset(self, seat: int, num_players: int, seed: int | None) -> None:
        super().reset(seat, num_players, seed)
        self.counter = CardCounter(self.config)
        self.tracker = _CountingTracker(self.config, seat, self.counter)

    def act_view(self, view: PlayerView, action_mask: NDArray[np.int8]) -> int:
        action = super().act_view(view, action_mask)
        if self.layout.type_arr[action] == ActionType.DISCARD:
            self.counter.played(int(self.layout.kind_arr[action]))  # my own face-down discard
        return action

    def played_instead(self, chosen: int, played: int) -> None:
        """My seat played ``played``, not the ``chosen`` move I returned (DAgger's student,
        ``experiments.train.imitate``): the own-discard fact recorded for ``chosen`` is taken back and ``played``'s
        recorded."""
        if self.layout.type_arr[chosen] == ActionType.DISCARD:
            self.counter.played(int(self.layout.kind_arr[chosen]), -1)
        if self.layout.type_arr[played] == ActionType.DISCARD:
            self.counter.played(int(self.layout.kind_arr[played]))

    # ---- beliefs ----
    def goal_weights(self, view: PlayerView) -> NDArray[np.float64]:
        """P(gold in slot g): settled facts first (reveals, own maps, two known stones), else the Bayes posterior."""
        facts = known_gold(view)
        if facts.max() > 0.99:
            return facts
        p = self.p_gold(view) * (facts > 0)
        return p / p.sum() if p.sum() > 0 else facts

    def p_sab(self) -> NDArray[np.float64]:
        assert self.beliefs is not None
        return self.beliefs.p_saboteur()

    # ---- planned evaluations ----
    def place_outcomes(
        self, ctx: _Context, ids: NDArray[np.int64], sign: float
    ) -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.int64]]:
        """The ``TOP_K`` placements best for ``sign`` (+1: shortest, -1: longest expected distance by the cheap
        estimate), with their exact expected distance and exact (k, 3) distances."""
        if ids.size == 0:
            return ids, np.zeros(0), np.zeros((0, 3), dtype=np.int64)
        lay = self.layout
        cells, orients = lay.arg_arr[ids], lay.orientation_arr[ids]
        est = placement_estimates(self.config, ctx.shape, ctx.reach, ctx.avail, cells, orients)
        cheap = expectation(np.minimum(est, CAP), ctx.weights)
        order = np.argsort(sign * cheap, kind="stable")[:TOP_K]
        boards = np.stack([placed(ctx.shape, int(cells[i]), int(orients[i])) for i in order])
        dist = boards_distance(self.config, boards, ctx.avail)
        return ids[order], expectation(np.minimum(dist, CAP), ctx.weights), dist

    def rockfall_outcomes(
        self, ctx: _Context, legal: NDArray[np.int64], dead_ends_first: bool
    ) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """Rockfalls near the believed gold (or on dead ends) and the exact expected distance after each."""
        ids = self.of_type(legal, ActionType.ROCKFALL)
        if ids.size == 0:
            return ids, np.zeros(0)
        geo = self.tracker.board.geo
        cells = self.layout.arg_arr[ids]
        near = sum(
            ctx.weights[g] * (np.abs(geo.row_of[cells] - geo.row_of[gc]) + np.abs(geo.col_of[cells] - geo.col_of[gc]))
            for g, gc in enumerate(geo.goal_cells)
        )
        rank = near.astype(float)
        if dead_ends_first:
            rank = rank - 100.0 * _SHAPE_DEAD_END[ctx.shape[cells]]
        else:
            rank = rank + 100.0 * (ctx.reach[cells] == 0)  # cutting needs a connected card
        order = np.argsort(rank, kind="stable")[:ROCKFALL_K]
        boards = np.stack([removed(ctx.shape, int(c)) for c in cells[order]])
        return ids[order], expectation(np.minimum(boards_distance(self.config, boards, ctx.avail), CAP), ctx.weights)

    def best_by_kind(self, ctx: _Context, legal: NDArray[np.int64]) -> dict[int, float]:
        """Cheap estimate of the expected distance after the best placement of each path kind in hand."""
        ids = self.of_type(legal, ActionType.PLACE)
        if ids.size == 0:
            return {}
        lay = self.layout
        est = placement_estimates(self.config, ctx.shape, ctx.reach, ctx.avail, lay.arg_arr[ids],
                                  lay.orientation_arr[ids])  # fmt: skip
        cheap = expectation(np.minimum(est, CAP), ctx.weights)
        out: dict[int, float] = {}
        for k, v in zip(lay.kind_arr[ids].tolist(), cheap.tolist(), strict=True):
            out[k] = min(out.get(k, INF), v)
        return out

    def discard_least_useful(self, legal: NDArray[np.int64], values: dict[int, float]) -> int:
        ids = self.of_type(legal, ActionType.DISCARD)
        if ids.size == 0:
            return self.pick(legal)
        score = -np.array([values.get(int(k), 0.0) for k in self.layout.kind_arr[ids]])
        return self.pick(ids, score)

    def map_unsettled(self, view: PlayerView, legal: NDArray[np.int64], ctx: _Context) -> int | None:
        """A map on a goal whose content is not settled for me; goals others I trust peeked come last."""
        if known_gold(view).max() > 0.99:
            return None  # the gold is settled (revealed, mapped, or the only goal left)
        ids = self.of_type(legal, ActionType.MAP)
        if ids.size == 0:
            return None
        slots = self.layout.arg_arr[ids]
        keep = np.array([view.goal_knowledge[int(s)] is None for s in slots])
        ids, slots = ids[keep], slots[keep]
        if ids.size == 0:
            return None
        trusted_peek = np.zeros(3)
        if self.beliefs is not None:
            ps = self.p_sab()
            p = self.config.num_players
            for off in range(1, p):
                seat = (self.seat + off) % p
                trusted_peek += view.peeked[off] * (1.0 - ps[seat])
        w = ctx.weights[slots]
        # a goal another digger I trust has mapped comes only after every goal nobody trusted has seen
        score = w * (1 - w) - trusted_peek[slots] - 0.01 * np.minimum(ctx.dist[slots], CAP)
        return self.pick(ids, score)


class PlannerMiner(ExpertAgent):
    """The planning gold-digger (see the module docstring)."""

    name = "planner"
    break_sure, break_close, trust = 0.75, 0.55, 0.3

    def choose(self, view: PlayerView, legal: NDArray[np.int64]) -> int:
        ctx = _Context(self, view)
        place_ids, place_after, place_dist = self.place_outcomes(ctx, self.of_type(legal, ActionType.PLACE), +1.0)
        finish = self._finishing(ctx, place_ids, place_dist)
        moves = (
            lambda: self.repair_self(legal),
            lambda: finish,
            lambda: self.break_believed(view, legal, ctx),
            lambda: self.map_unsettled(view, legal, ctx),
            lambda: self.build_planned(ctx, place_ids, place_after),
            lambda: self.clear_route(ctx, legal),
            lambda: self.repair_trusted(legal),
        )
        return self.first_of(moves, lambda: self.discard_least_useful(legal, self.card_values(view, legal, ctx)))

    def _finishing(self, ctx: _Context, ids: NDArray[np.int64], dist: NDArray[np.int64]) -> int | None:
        """A placement that reaches a goal I believe is gold with P >= 0.5 (the likeliest such goal)."""
        if ids.size == 0:
            return None
        score = ((dist == 0) * ctx.weights[None, :]).max(axis=1)
        return self.pick(ids, score) if score.max() >= 0.5 else None

    def build_planned(self, ctx: _Context, ids: NDArray[np.int64], after: NDArray[np.float64]) -> int | None:
        if ids.size == 0:
            return None
        gain = ctx.expected - after
        kinds = self.layout.kind_arr[ids]
        score = gain - 0.01 * _PATH_VALUE[kinds]  # equal gain: spend the less versatile card
        if gain.max() <= 1e-6:
            return None
        ok = gain > 1e-6
        return self.pick(ids[ok], score[ok])

    def break_believed(self, view: PlayerView, legal: NDArray[np.int64], ctx: _Context) -> int | None:
        ids = self.of_type(legal, ActionType.BREAK)
        ids = ids[self.layout.target_arr[ids] != 0] if ids.size else ids
        if ids.size == 0:
            return None
        seats = self.seat_of(ids)
        p = self.p_sab()[seats]
        need = self.break_close if ctx.expected <= 4 else self.break_sure
        offsets = self.layout.target_arr[ids]
        whole = ~view.broken[offsets].any(axis=1)
        score = p + 0.2 * whole - 0.01 * offsets
        ok = p >= need
        return self.pick(ids[ok], score[ok]) if ok.any() else None

    def clear_route(self, ctx: _Context, legal: NDArray[np.int64]) -> int | None:
        ids, after = self.rockfall_outcomes(ctx, legal, dead_ends_first=True)
        if ids.size == 0:
            return None
        gain = ctx.expected - after
        return self.pick(ids, gain) if gain.max() >= 1.0 - 1e-9 else None

    def repair_trusted(self, legal: NDArray[np.int64]) -> int | None:
        ids = self.of_type(legal, ActionType.REPAIR, ActionType.DOUBLE_REPAIR)
        ids = ids[self.layout.target_arr[ids] != 0] if ids.size else ids
        if ids.size == 0:
            return None
        p = self.p_sab()[self.seat_of(ids)]
        ok = p < self.trust
        return self.pick(ids[ok], -p[ok]) if ok.any() else None

    def card_values(self, view: PlayerView, legal: NDArray[np.int64], ctx: _Context) -> dict[int, float]:
        """How much each card kind in hand is worth keeping (the lowest is discarded)."""
        values: dict[int, float] = {}
        best = self.best_by_kind(ctx, legal)
        others = np.delete(self.p_sab(), self.seat)
        suspect = others.size > 0 and others.max() > self.trust
        settled = known_gold(view).max() > 0.99
        broken_any = bool(view.broken.any())
        for k in np.flatnonzero(view.hand[:NUM_DECK_KINDS]).tolist():
            if k < 16:
                v = float(_PATH_VALUE[k])
                if k in best:
                    v += 2.0 * max(0.0, ctx.expected - best[k])
            elif k in (16, 17, 18):
                v = 4.0 if suspect else 3.0
            elif k == KIND_ROCKFALL:
                v = 2.5 + float(_SHAPE_DEAD_END[ctx.shape[ctx.shape >= 0]].any())
            elif k == KIND_MAP:
                v = 0.0 if settled else 4.5
            else:  # repairs
                v = 3.5 + broken_any
            values[k] = v
        return values


class BlockerSaboteur(ExpertAgent):
    """The blocking saboteur (see the module docstring)."""

    name = "blocker"
    exposed, cover = 0.6, 0.3

    @property
    def close(self) -> float:
        """Expected distance at which to stop hiding: the diggers place about once per seat between my turns."""
        return 3.0 + 0.8 * (self.config.num_players - 1)

    def reset(self, seat: int, num_players: int, seed: int | None) -> None:
        super().reset(seat, num_players, seed)
        self.public = BayesModel(self.config.num_players, self.tracker.board.geo.goal_cells)  # type: ignore[assignment]

    def self_suspicion(self) -> float:
        assert self.public is not None
        return float(self.public.p_saboteur()[self.seat])

    def choose(self, view: PlayerView, legal: NDArray[np.int64]) -> int:
        ctx = _Context(self, view)
        near = ctx.expected <= self.close or bool((ctx.dist[ctx.weights > 0.2] <= 2).any())
        moves: tuple[Callable[[], int | None], ...]
        if near or self.self_suspicion() > self.exposed:
            moves = (lambda: self.repair_self(legal), lambda: self.sabotage(view, legal, ctx))
        else:
            moves = (
                lambda: self.repair_self(legal),
                lambda: self.map_unsettled(view, legal, ctx),
                lambda: self.break_dangerous(view, legal, cover=self.cover),
                lambda: self.plausible(view, legal, ctx),
            )
        return self.first_of(moves, lambda: self.discard_least_useful(legal, self.card_values(view, ctx)))

    def sabotage(self, view: PlayerView, legal: NDArray[np.int64], ctx: _Context) -> int | None:
        pids, pafter, _ = self.place_outcomes(ctx, self.of_type(legal, ActionType.PLACE), -1.0)
        rids, rafter = self.rockfall_outcomes(ctx, legal, dead_ends_first=False)
        ids = np.concatenate([pids, rids])
        harm = np.concatenate([pafter, rafter]) - ctx.expected
        best = float(harm.max()) if ids.size else 0.0
        if best >= 2.0 - 1e-9 or (best >= 1.0 - 1e-9 and ctx.expected <= 1.0):
            return self.pick(ids, harm)
        hit = self.break_dangerous(view, legal)
        if hit is not None:
            return hit
        return self.pick(ids, harm) if best >= 1.0 - 1e-9 else None

    def break_dangerous(self, view: PlayerView, legal: NDArray[np.int64], cover: float = 0.0) -> int | None:
        """Break the believed digger who acts soonest with whole tools; with ``cover`` > 0 only one a public
        observer suspects at least that much (the break then looks like a digger's)."""
        ids = self.of_type(legal, ActionType.BREAK)
        ids = ids[self.layout.target_arr[ids] != 0] if ids.size else ids
        if ids.size == 0:
            return None
        offsets = self.layout.target_arr[ids]
        seats = self.seat_of(ids)
        miner = 1.0 - self.p_sab()[seats]
        whole = ~view.broken[offsets].any(axis=1)
        score = miner * np.where(whole, 1.0, 0.2) / offsets
        ok = miner > 0.5
        if cover > 0:
            assert self.public is not None
            ok &= whole & (self.public.p_saboteur()[seats] >= cover)
        return self.pick(ids[ok], score[ok]) if ok.any() else None

    def plausible(self, view: PlayerView, legal: NDArray[np.int64], ctx: _Context) -> int | None:
        """A placement that looks like progress to a public observer but does not bring my believed gold closer."""
        ids = self.of_type(legal, ActionType.PLACE)
        if ids.size == 0:
            return None
        lay = self.layout
        ok = ~_DEAD_END_KIND[lay.kind_arr[ids]]
        ids = ids[ok]
        if ids.size == 0:
            return None
        cells, orients = lay.arg_arr[ids], lay.orientation_arr[ids]
        est = np.minimum(placement_estimates(self.config, ctx.shape, ctx.reach, ctx.avail, cells, orients), CAP)
        public = np.array([0.0 if view.goal_stone.ravel()[c] else 1.0 for c in self.tracker.board.geo.goal_cells])
        public = public / public.sum() if public.sum() else np.full(3, 1 / 3)
        public_gain = expectation(np.minimum(ctx.dist, CAP), public) - expectation(est, public)
        true_gain = ctx.expected - expectation(est, ctx.weights)
        good = (public_gain > 0) & (true_gain <= 0)
        if not good.any():
            return None
        return self.pick(ids[good], public_gain[good] - true_gain[good])

    def card_values(self, view: PlayerView, ctx: _Context) -> dict[int, float]:
        values: dict[int, float] = {}
        settled = known_gold(view).max() > 0.99
        broken_me = bool(view.broken[0].any())
        for k in np.flatnonzero(view.hand[:NUM_DECK_KINDS]).tolist():
            if k < 16:
                v = 4.0 if _DEAD_END_KIND[k] else 3.0 - 0.3 * float(_PATH_VALUE[k])  # drop the miners' best cards
            elif k in (16, 17, 18) or k == KIND_ROCKFALL:
                v = 4.0
            elif k == KIND_MAP:
                v = 0.0 if settled else 2.5
            else:
                v = 1.0 + 3.0 * broken_me
            values[k] = v
        return values


__all__ = ["BlockerSaboteur", "ExpertAgent", "PlannerMiner"]
