"""The base game's determinizer (and its role sampler): see ``agents.determinize``."""


from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from agents.base.analysis import board_from_view
from agents.base.beliefs import BayesModel
from agents.base.tracker import ViewTracker
from agents.determinize import UNKNOWN, EventLog, RoleSample, RoleSampler, _deal, _fresh_record, _reconcile
from saboteur_env import EventType, GameConfig, PlayerView
from saboteur_env.base import board as bboard
from saboteur_env.base import observation as bobs
from saboteur_env.base.cards import (
    GOLD_CARD_VALUES,
    KIND_BROKEN,
    KIND_GOAL_GOLD,
    KIND_GOAL_STONE_A,
    KIND_GOAL_STONE_B,
    NUM_DECK_KINDS,
    SABOTEURS_BY_PLAYERS,
    SHAPE_ID,
    SHAPE_JOIN,
    SHAPE_KIND,
    SHAPE_OPEN,
    SHAPE_STUB,
    Role,
    deck_counts,
)
from saboteur_env.base.state import GameState


class BayesRoleSampler:
    """Base game: (saboteur set, gold slot) drawn from the exact posterior of :class:`BayesModel` (public events,
    own role, own map results; see ``agents/base/beliefs.py``)."""

    def __init__(self, config: GameConfig, seat: int, epsilon: float = 0.1) -> None:
        self.config, self.seat = config, seat
        self.tracker = ViewTracker(config, seat)
        self.model = BayesModel(config.num_players, bboard.geometry(config).goal_cells, epsilon=epsilon)
        self._round = -1
        self._peeks: set[int] = set()

    def _new_round(self, view: PlayerView) -> None:
        self._round = view.round
        self._peeks = set()
        self.model.reset_round(self.seat, view.role)

    def observe(self, view: PlayerView) -> None:
        # The same event handling as agents.base.ladder.LadderAgent._follow.
        events = self.tracker.update(view)
        if self._round < 0:
            self._new_round(view)
        for ev in events:
            if ev.type == EventType.ROUND_END:
                self._new_round(view)
            else:
                self.model.observe(ev)
        if view.round != self._round:
            self._new_round(view)
        for slot in np.flatnonzero(view.peeked[0]).tolist():
            if slot not in self._peeks and view.goal_knowledge[slot] is not None:
                self.model.observe_peek(slot, view.goal_knowledge[slot] == "gold")
                self._peeks.add(slot)

    def sample_roles(self, view: PlayerView, rng: np.random.Generator) -> RoleSample:
        post = self.model.posterior()
        # Hypotheses the view rules out (a reveal the model has not seen yet) get no weight.
        possible = np.array([k != "stone" for k in view.goal_knowledge])
        if "gold" in view.goal_knowledge:
            possible = np.array([k == "gold" for k in view.goal_knowledge])
        w = (post * possible[None, :]).ravel()
        if not w.sum() > 0:
            w = np.repeat(possible[None, :].astype(float), post.shape[0], axis=0).ravel()
        h = int(rng.choice(w.size, p=w / w.sum()))
        sabs, gold = self.model.sets[h // 3], h % 3
        roles = tuple(int(Role.SABOTEUR if s else Role.GOLD_DIGGER) for s in sabs)
        # The role deck holds one card more than the table: the left-over card is what the sample leaves over.
        left = Role.SABOTEUR if int(sabs.sum()) < SABOTEURS_BY_PLAYERS[self.config.num_players] else Role.GOLD_DIGGER
        return RoleSample(roles, (int(left),), gold)


class BaseDeterminizer:
    """Base game (and variants on its rules with another deck): see the module docstring."""

    def __init__(self, config: GameConfig, seat: int, roles: RoleSampler | None = None) -> None:
        self.config, self.seat = config, seat
        self.log = EventLog(config, seat)
        self.roles: RoleSampler = roles if roles is not None else BayesRoleSampler(config, seat)
        self.view: PlayerView | None = None
        self.obs: NDArray[np.float32] | None = None

    def observe(self, observation: NDArray[np.float32]) -> PlayerView:
        view = PlayerView.from_observation(observation, self.config)
        self.log.update(view)
        self.roles.observe(view)
        self.view, self.obs = view, np.asarray(observation, dtype=np.float32)
        return view

    def sample_reference(self, rng: np.random.Generator) -> GameState:
        """One determinization as a numpy reference ``GameState``."""
        view = self.view
        if view is None:
            raise ValueError("sample() needs observe(observation) first")
        cfg, me = self.config, self.seat
        p = cfg.num_players
        ab = [(me + k) % p for k in range(p)]  # seat offset -> absolute seat
        s = _fresh_record(cfg, rng)  # later rounds' set-up, gold deck: fresh draws
        rnd = view.round
        s.round = rnd
        rows, _complete = self.log.round_rows(rnd)  # incomplete rows: the pool is reconciled by count
        # ---- roles and goals ----
        rs = self.roles.sample_roles(view, rng)
        s.roles[:] = rs.roles
        s.roles[me] = view.role
        s.leftover_role = int(rs.rest[0]) if rs.rest else int(Role.GOLD_DIGGER)
        s.round_roles[rnd, :p] = s.roles
        s.round_roles[rnd, p] = s.leftover_role
        shape = self._board(view, rows)
        geo = bboard.geometry(cfg)
        goal_kind = np.full(3, -1, dtype=np.int16)
        for g, cell in enumerate(geo.goal_cells):
            if shape[cell] >= 0:
                goal_kind[g] = SHAPE_KIND[shape[cell]]
        gold = [g for g, k in enumerate(view.goal_knowledge) if k == "gold"]
        if gold:
            gold_slot = gold[0]
        elif rs.gold is not None and view.goal_knowledge[rs.gold] is None:
            gold_slot = rs.gold
        else:
            gold_slot = int(rng.choice([g for g, k in enumerate(view.goal_knowledge) if k is None]))
        goal_kind[gold_slot] = KIND_GOAL_GOLD
        stones = [k for k in (KIND_GOAL_STONE_A, KIND_GOAL_STONE_B) if k not in goal_kind.tolist()]
        free = [g for g in range(3) if goal_kind[g] < 0]
        goal_kind[free] = rng.permutation(np.array(stones, dtype=np.int16))[: len(free)]
        s.goal_kind[:] = goal_kind
        s.round_goals[rnd] = goal_kind
        s.goal_revealed[:] = [shape[c] >= 0 for c in geo.goal_cells]
        s.cell_shape[:] = shape
        s.cell_open[:] = np.where(shape >= 0, SHAPE_OPEN[np.maximum(shape, 0)], 0)
        bboard.recompute_reach(s)
        bboard.refresh_planes(s)
        # ---- cards ----
        full = deck_counts(cfg).astype(np.int64)
        out = np.zeros(NUM_DECK_KINDS, dtype=np.int64)
        discards = np.zeros(NUM_DECK_KINDS, dtype=np.int64)
        hidden_discards: list[int] = []  # row indices of other seats' face-down discards
        for i, (t, _actor, kind, _target, _cell, arg) in enumerate(rows):
            if t in (EventType.PLACE, EventType.BREAK, EventType.REPAIR, EventType.ROCKFALL, EventType.MAP):
                out[kind] += 1
            if t == EventType.REPAIR:
                discards[kind] += 1
                discards[KIND_BROKEN[arg]] += 1
            elif t == EventType.ROCKFALL:
                discards[kind] += 1
                discards[arg] += 1
            elif t == EventType.MAP:
                discards[kind] += 1
            elif t == EventType.DISCARD:
                if kind >= 0:
                    out[kind] += 1
                    discards[kind] += 1
                else:
                    hidden_discards.append(i)
        others = ab[1:]
        sizes = [int(view.hand_size[k]) for k in range(1, p)]
        need = sum(sizes) + view.deck_size + len(hidden_discards)
        rest = np.maximum(full - out - view.hand, 0)
        pool = np.repeat(np.arange(NUM_DECK_KINDS), rest)
        pool = _reconcile(pool, need, full, rng)
        parts = _deal(pool, [*sizes, len(hidden_discards)], rng)
        s.hands[:] = 0
        s.hands[me] = view.hand
        for q, part in zip(others, parts, strict=False):
            s.hands[q] = np.bincount(part, minlength=NUM_DECK_KINDS)
        hidden_kinds = parts[len(others)]
        for kind in hidden_kinds.tolist():
            discards[kind] += 1
        pile = parts[len(others) + 1]
        width = s.round_decks.shape[1]
        s.deck_pos = width - view.deck_size
        s.round_decks[rnd, s.deck_pos :] = pile
        dealt = np.repeat(np.arange(NUM_DECK_KINDS), np.maximum(full - np.bincount(pile, minlength=NUM_DECK_KINDS), 0))
        s.round_decks[rnd, : s.deck_pos] = rng.permutation(dealt)[: s.deck_pos]  # order of the drawn part: unseen
        s.discards[:] = discards
        # ---- public seat rows, gold ----
        for k, q in enumerate(ab):
            s.broken[q] = view.broken[k]
            s.peeked[q] = view.peeked[k]
            s.discarded[q] = view.discarded[k]
            s.gold_cards[q] = view.gold_cards[k]
            s.last_round_roles[q] = view.last_round_roles[k]
            s.gold_nuggets[q] = rng.choice(GOLD_CARD_VALUES, size=int(view.gold_cards[k])).sum()
        s.gold_nuggets[me] = view.my_nuggets
        s.gold_deck_size = view.gold_deck_size
        s.gold_left[:] = False
        s.gold_left[rng.permutation(s.gold_deck.size)[: view.gold_deck_size]] = True
        s.current = ab[view.to_act]
        s.last_player = self._last_player(rows, s.current)
        # ---- the event log (the observation's history window is its tail) ----
        all_rows = np.array(self.log.rows, dtype=np.int16).reshape(-1, 6)
        offset = len(self.log.rows) - len(rows)
        for j, kind in zip(hidden_discards, hidden_kinds.tolist(), strict=True):
            all_rows[offset + j, 2] = kind
        unknown = all_rows[:, 0] == UNKNOWN
        all_rows[unknown] = (EventType.DISCARD, me, 0, -1, -1, -1)  # placeholders outside the window
        s.events[: len(all_rows)] = all_rows
        s.num_events = len(all_rows)
        s.num_decisions = len(all_rows)
        ends = all_rows[all_rows[:, 0] == EventType.ROUND_END]
        s.round_results = [
            {"round": r, "winner": "saboteurs" if r < len(ends) and ends[r, 5] == 1 else "gold-diggers",
             "finder": -1, "last_player": int(ends[r, 1]) if r < len(ends) else 0,
             "roles": [int(x) for x in s.last_round_roles], "gold_cards": [0] * p, "nuggets": [0] * p,
             "decisions": 0}
            for r in range(rnd)
        ]  # fmt: skip
        s._cache.clear()
        s.board_changed()
        bobs.refresh_seat_table(s)
        bobs.rebuild_history(s)
        return s

    def sample(self, rng: np.random.Generator) -> Any:
        """One determinization as the state users play (the compiled core's, through the variant's ``adopt``)."""
        s = self.sample_reference(rng)
        adopt = getattr(self.config.variant, "adopt", None)
        return s if adopt is None else adopt(s)

    def _board(self, view: PlayerView, rows: list[tuple[int, int, int, int, int, int]]) -> NDArray[np.int16]:
        """Shape ids per cell: the view's board, with the kinds and rotations of this round's placements from the
        log where the planes alone do not tell cards apart."""
        shape = board_from_view(view).shape.astype(np.int16)
        for t, _a, kind, _t, cell, arg in rows:
            if t in (EventType.PLACE, EventType.REVEAL) and cell >= 0 and shape[cell] >= 0:
                sid = SHAPE_ID.get((kind, arg))
                if sid is None:
                    continue
                same = all(bits[sid] == bits[shape[cell]] for bits in (SHAPE_OPEN, SHAPE_JOIN, SHAPE_STUB))
                if same:  # (a missed rockfall and re-placement can leave a stale log entry: the view decides)
                    shape[cell] = sid
        return shape

    @staticmethod
    def _last_player(rows: list[tuple[int, int, int, int, int, int]], current: int) -> int:
        for t, actor, *_ in reversed(rows):
            if t in (EventType.PLACE, EventType.BREAK, EventType.REPAIR, EventType.ROCKFALL, EventType.MAP,
                     EventType.DISCARD):  # fmt: skip
                return actor
        return current
