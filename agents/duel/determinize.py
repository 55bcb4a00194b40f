"""The Duel's determinizer: see ``agents.determinize``."""


from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from agents.determinize import _deal, _fresh_record, _new_events, _reconcile
from saboteur_env import GameConfig
from saboteur_env.duel import board as dboard
from saboteur_env.duel import cards as dc
from saboteur_env.duel.observation import duel_observation_layout
from saboteur_env.duel.state import DuelEvent
from saboteur_env.duel.view import DuelView


class DuelDeterminizer:
    """The Duel (no roles): the opponent's hand, the pile and the face-down discards from the unseen cards, goal
    cards of slots the seat has not seen from the goals still in the pool, fresh ranks for later rounds.

    The Duel's observation carries no event count, so new events are found by matching the history window
    against the previous one (the smallest shift that fits). Only the window has to be exact; the log only
    sharpens the card pool (played action cards, gold path cards and goals that left the game), which is
    reconciled by count with what the view shows."""

    def __init__(self, config: GameConfig, seat: int) -> None:
        self.config, self.seat = config, seat
        self.rows: list[tuple[int, int, int, int, int]] = []  # absolute actors
        self.window: list[tuple[int, int, int, int, int]] = []
        self.view: Any = None
        self.obs: NDArray[np.float32] = np.zeros(0, dtype=np.float32)

    def observe(self, observation: NDArray[np.float32]) -> Any:

        view = DuelView.from_observation(observation, self.config, self.seat)
        me, opp = self.seat, 1 - self.seat
        window = [(t, me if mine else opp, kind, cell, round(arg)) for t, mine, kind, cell, arg in view.events]
        shift = _new_events(self.window, window, self.config.history_length)
        if shift > 0:
            self.rows.extend(window[len(window) - shift :])
        self.window, self.view = window, view
        self.obs = np.asarray(observation, dtype=np.float32)
        return view

    def sample_reference(self, rng: np.random.Generator) -> Any:

        view = self.view
        if view is None:
            raise ValueError("sample() needs observe(observation) first")
        cfg, me = self.config, self.seat
        opp = 1 - me
        s = view.public_state()
        fresh = _fresh_record(cfg, rng)
        s.card_rank, s.goal_rank = fresh.card_rank, fresh.goal_rank  # later rounds' shuffles: fresh
        geo = dboard.geometry(cfg)
        ends = [i for i, r in enumerate(self.rows) if r[0] == DuelEvent.ROUND_END]
        this_round = self.rows[ends[-1] + 1 :] if len(ends) == view.round and ends else self.rows
        if len(ends) != view.round:
            this_round = []
        before = self.rows[: ends[-1] + 1] if ends else []
        # ---- goals: those out of the game, the round's six ----
        out_goals = [
            r[2] - dc.FIRST_GOAL_KIND for r in before if r[0] == DuelEvent.REVEAL and r[2] >= dc.FIRST_GOAL_KIND
        ]
        n_out = dc.NUM_GOALS - dc.GOALS_PER_ROUND - view.goals_in_pool
        goal_card = np.full(dc.GOALS_PER_ROUND, -1, dtype=np.int16)
        for slot, cell in enumerate(geo.goal_cells):
            if s.goal_revealed[slot]:
                goal_card[slot] = int(dc.SHAPE_KIND[s.cell_shape[cell]]) - dc.FIRST_GOAL_KIND
            elif view.my_peeks[slot] >= 0:
                goal_card[slot] = int(view.my_peeks[slot])
        known = set(goal_card[goal_card >= 0].tolist())
        out_goals = [g for g in dict.fromkeys(out_goals) if g not in known]
        free = [g for g in range(dc.NUM_GOALS) if g not in known and g not in out_goals]
        free = rng.permutation(np.array(free, dtype=np.int64)).tolist()
        if len(out_goals) > n_out:
            out_goals = rng.permutation(np.array(out_goals)).tolist()[:n_out]
        while len(out_goals) < n_out:
            out_goals.append(free.pop())
        for slot in np.flatnonzero(goal_card < 0).tolist():
            goal_card[slot] = free.pop()
        s.goal_card = goal_card
        s.goal_out = np.zeros(dc.NUM_GOALS, dtype=bool)
        s.goal_out[out_goals] = True
        # ---- cards: gold path cards out of the game, the board, public discards; the rest is unseen ----
        full = dc.DECK_COUNTS.astype(np.int64)
        kinds_out = np.zeros(dc.NUM_DECK_KINDS, dtype=np.int64)
        for r in before:
            if r[0] == DuelEvent.SECURE and 0 <= r[2] < dc.NUM_PATH_KINDS:
                kinds_out[r[2]] += 1
        maze = np.zeros(dc.NUM_DECK_KINDS, dtype=np.int64)
        kinds = dc.SHAPE_KIND[s.cell_shape[s.cell_shape >= 0]]
        np.add.at(maze, kinds[kinds < dc.NUM_PATH_KINDS].astype(np.int64), 1)
        kinds_out = np.minimum(kinds_out, np.maximum(full - maze - view.hand, 0))
        unseen = np.maximum(full - kinds_out - maze - view.hand, 0)
        n_discards = max(0, int(unseen.sum()) - view.hand_sizes[1] - view.deck_size)
        public = np.zeros(dc.NUM_DECK_KINDS, dtype=np.int64)
        for t, _a, kind, _cell, _arg in this_round:
            if t in (DuelEvent.BREAK, DuelEvent.REPAIR, DuelEvent.MAP, DuelEvent.KEY) and 0 <= kind < dc.NUM_DECK_KINDS:
                public[kind] += 1
            elif t == DuelEvent.ROCKFALL:
                public[dc.KIND_ROCKFALL] += 1
                if 0 <= kind < dc.NUM_DECK_KINDS:
                    public[kind] += 1
        public = np.minimum(public, unseen)
        if public.sum() > n_discards:
            keep = rng.permutation(np.repeat(np.arange(dc.NUM_DECK_KINDS), public))[:n_discards]
            public = np.bincount(keep, minlength=dc.NUM_DECK_KINDS)
        pool = np.repeat(np.arange(dc.NUM_DECK_KINDS), unseen - public)
        need = view.hand_sizes[1] + view.deck_size + n_discards - int(public.sum())
        pool = _reconcile(pool, need, full, rng)
        opp_hand, pile, hidden = _deal(pool, [view.hand_sizes[1], view.deck_size], rng)
        s.hands[opp] = np.bincount(opp_hand, minlength=dc.NUM_DECK_KINDS)
        s.deck = pile.astype(np.int16)
        s.deck_pos = 0
        s.discards = (public + np.bincount(hidden, minlength=dc.NUM_DECK_KINDS)).astype(np.int16)
        card_out = np.zeros(dc.DECK_SIZE, dtype=bool)
        for kind in np.flatnonzero(kinds_out).tolist():
            card_out[np.flatnonzero(dc.CARD_KIND == kind)[: kinds_out[kind]]] = True
        s.card_out = card_out
        # ---- score piles (only their sizes and totals are public), turn, log ----
        pile_cards = self._pile_cards()
        s.score = [_pile(int(view.nuggets[0]), pile_cards[0]), _pile(int(view.nuggets[1]), pile_cards[1])]
        if me == 1:
            s.score.reverse()
        s.current = me if view.my_turn else opp
        s.starter = s.current
        s.events = list(self.window)
        last_end = max((i for i, r in enumerate(self.window) if r[0] == DuelEvent.ROUND_END), default=-1)
        s.round_first_event = last_end + 1
        s.num_decisions = len(self.rows)
        s.round_first_decision = 0
        s.round_results = [
            {"round": r, "reason": "cards exhausted", "gained": [0, 0], "nuggets": [0, 0], "decisions": 0}
            for r in range(view.round)
        ]
        s.board_changed()
        return s

    def _pile_cards(self) -> tuple[int, int]:
        """Score pile sizes (me, opponent) from the last observation (the view object does not carry them)."""

        part = duel_observation_layout(self.config).split(self.obs)["pile_cards"]
        return round(float(part[0])), round(float(part[1]))

    def sample(self, rng: np.random.Generator) -> Any:
        s = self.sample_reference(rng)
        adopt = getattr(self.config.variant, "adopt", None)
        return s if adopt is None else adopt(s)


def _pile(nuggets: int, cards: int) -> list[int]:
    """A score pile of ``cards`` cards worth ``nuggets`` in total (values as even as possible)."""
    if cards <= 0:
        return []
    q, r = divmod(nuggets, cards)
    return [q + 1] * r + [q] * (cards - r)
