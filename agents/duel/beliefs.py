"""Saboteur: The Duel beliefs from one seat's view: where the goal cards lie, and the opponent's hand.

Both are exact posteriors under the game's shuffles (docs/rules.md §3.3, §3.10, §5.3), with no model of the
opponent's choices:

* **Goal pool.** A round lays out 6 goals drawn uniformly from the pool (the 18 goals minus those revealed in
  earlier rounds, all public). Given what the seat knows for certain - revealed goals and its own map results - the
  other face-down slots hold a uniformly random ordered sample of the rest, so each such slot holds any remaining
  goal with probability ``1 / |rest|`` (:func:`slot_goal_probabilities`). The opponent's peeks are public choices
  with private results and do not move the posterior.
* **Opponent's hand.** The cards in play this round (the 52 minus gold path cards won in earlier rounds) less
  everything the seat has seen - the maze, cards played face up (actions, rockfalls and the cards they removed),
  its own hand and its own face-down discards - are the **unseen** cards: the draw pile, the opponent's hand and
  the opponent's face-down discards, in uniformly random positions if the opponent's discards are treated as
  random (the one assumption; a discarding opponent keeps its best cards, which this ignores). The hand is then a
  uniform ``h``-subset of the unseen cards: multivariate hypergeometric (:func:`hand_distribution`).

:class:`DuelBelief` keeps the facts up to date from successive views of one seat (new public events of each view
are found by aligning history windows, as in :mod:`agents.sab2.beliefs`) plus the seat's own face-down discards
(:meth:`DuelBelief.note_action`, from its own actions). ``consistent`` says whether the count of unseen cards
matches the public sizes (pile + opponent's hand + opponent's face-down discards); it fails only when more events
than the history window holds happened between two of the seat's views.
"""

from __future__ import annotations

from itertools import permutations
from math import comb

import numpy as np
from numpy.typing import NDArray

from agents.sab2.beliefs import new_events
from saboteur_env.common.config import GameConfig
from saboteur_env.duel import board
from saboteur_env.duel import cards as dc
from saboteur_env.duel.actions import PAIRS, duel_action_layout
from saboteur_env.duel.state import DuelEvent as E
from saboteur_env.duel.view import DuelView

SLOTS = dc.GOALS_PER_ROUND
NUGGETS = dc.GOAL_NUGGETS.astype(float)


def slot_goal_probabilities(pool: list[int] | NDArray[np.int64], known: list[int | None]) -> NDArray[np.float64]:
    """(slots, 18) P(slot holds goal g) when the slots hold a uniform ordered sample of ``pool`` (goal indices)
    and ``known[slot]`` is the goal of a slot known for certain (None: unknown)."""
    pool_set = {int(g) for g in pool}
    if len(pool_set) != len(pool):
        raise ValueError(f"pool={list(pool)} repeats a goal")
    fixed = [g for g in known if g is not None]
    bad = [g for g in fixed if g not in pool_set]
    if bad or len(set(fixed)) != len(fixed):
        raise ValueError(f"known goals {fixed} must be distinct members of the pool {sorted(pool_set)}")
    rest = sorted(pool_set - set(fixed))
    unknown = sum(g is None for g in known)
    if unknown > len(rest):
        raise ValueError(f"{unknown} unknown slots but only {len(rest)} goals left in the pool")
    out = np.zeros((len(known), dc.NUM_GOALS))
    for slot, g in enumerate(known):
        if g is not None:
            out[slot, g] = 1.0
        elif rest:
            out[slot, rest] = 1.0 / len(rest)
    return out


def brute_force_slot_goals(pool: list[int], known: list[int | None]) -> NDArray[np.float64]:
    """The same by enumerating every ordered layout of the pool on the slots (small cases; the tests' oracle)."""
    out = np.zeros((len(known), dc.NUM_GOALS))
    count = 0
    for layout in permutations(pool, len(known)):
        if all(k is None or k == g for k, g in zip(known, layout, strict=True)):
            count += 1
            for slot, g in enumerate(layout):
                out[slot, g] += 1
    if count == 0:
        raise ValueError("no layout is consistent with the known goals")
    return out / count


def hand_distribution(unseen: NDArray[np.int64], hand_size: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """For a uniform ``hand_size``-subset of the ``unseen`` cards (counts per kind): (expected count per kind,
    P(at least one of the kind))."""
    u = np.asarray(unseen, dtype=np.int64)
    if np.any(u < 0):
        raise ValueError(f"unseen counts must be non-negative, got {u.tolist()}")
    total = int(u.sum())
    if not 0 <= hand_size <= total:
        raise ValueError(f"hand_size={hand_size} must be in 0..{total} (the unseen cards)")
    if total == 0:
        return np.zeros(len(u)), np.zeros(len(u))
    expected = hand_size * u / total
    none = np.array([comb(total - int(k), hand_size) for k in u], dtype=float) / comb(total, hand_size)
    return expected, 1.0 - none


class DuelBelief:
    """The seat's goal and hand beliefs, kept up to date from its successive views (see the module docstring)."""

    def __init__(self, config: GameConfig, seat: int) -> None:
        if config.game != "duel":
            raise ValueError(f"DuelBelief is for game='duel', not {config.game!r}")
        if seat not in (0, 1):
            raise ValueError(f"seat={seat} must be 0 or 1")
        self.config = config
        self.seat = seat
        self.geo = board.geometry(config)
        self.layout = duel_action_layout(config)
        self.window = config.history_length
        self.goals_out: set[int] = set()  # revealed in earlier rounds (they left the game)
        self.cards_out = np.zeros(dc.NUM_DECK_KINDS, dtype=np.int64)  # gold path cards won in earlier rounds
        self.round = -1
        self._last: tuple = ()
        self._new_round()
        self.unseen = np.zeros(dc.NUM_DECK_KINDS, dtype=np.int64)
        self.opp_hand = 0
        self.known: list[int | None] = [None] * SLOTS
        self.consistent = True

    def _new_round(self) -> None:
        self.revealed: dict[int, int] = {}  # slot -> goal, this round
        self.secured_cards = np.zeros(dc.NUM_DECK_KINDS, dtype=np.int64)  # gold path cards with a counter
        self.face_up = np.zeros(dc.NUM_DECK_KINDS, dtype=np.int64)  # played action cards and rockfalled cards
        self.own_face_down = np.zeros(dc.NUM_DECK_KINDS, dtype=np.int64)
        self.opp_face_down = 0

    # ---- facts ----
    def note_action(self, action: int, count: int = 1) -> None:
        """The seat's own action: its face-down discards (a pass, a repair by discarding) are its private facts
        (``count=-1`` takes back an action noted but not played)."""
        act = self.layout.decode(action)
        if act.segment in ("pass", "repair_discard"):
            kinds = [act.kind] if act.kind >= 0 else list(PAIRS[act.pair]) if act.pair >= 0 else []
            for k in kinds:
                self.own_face_down[k] += count

    def _event(self, ev: tuple[int, bool, int, int, float]) -> None:
        etype, mine, kind, cell, arg = ev
        if etype in (E.BREAK, E.REPAIR, E.MAP, E.KEY) and 0 <= kind < dc.NUM_DECK_KINDS:
            self.face_up[kind] += 1
        elif etype == E.ROCKFALL:
            self.face_up[dc.KIND_ROCKFALL] += 1
            if 0 <= kind < dc.NUM_DECK_KINDS:
                self.face_up[kind] += 1  # the removed card is discarded face up
        elif etype == E.SECURE and 0 <= kind < dc.NUM_DECK_KINDS:
            self.secured_cards[kind] += 1
        elif etype == E.REVEAL and kind >= dc.FIRST_GOAL_KIND and cell in self.geo.goal_slot:
            self.revealed[self.geo.goal_slot[cell]] = kind - dc.FIRST_GOAL_KIND
        elif etype in (E.PASS, E.REPAIR_DISCARD) and not mine:
            self.opp_face_down += 2 if etype == E.REPAIR_DISCARD else round(arg)

    def _end_round(self) -> None:
        self.goals_out |= set(self.revealed.values())
        self.cards_out += self.secured_cards
        self._new_round()

    def update(self, view: DuelView) -> DuelBelief:
        window = tuple(view.events)
        fresh = new_events(self._last, window, self.window)
        self._last = window
        if self.round < 0:
            self.round = view.round
        for ev in fresh:
            if ev[0] == E.ROUND_END:
                self._end_round()
                self.round += 1
            else:
                self._event(ev)
        if view.round != self.round:  # a round end the window did not show
            self._end_round()
            self.round = view.round
        s = view.public_state()
        for slot, cell in enumerate(self.geo.goal_cells):  # revealed goals on the board back up the events
            if s.goal_revealed[slot] and slot not in self.revealed:
                self.revealed[slot] = int(dc.SHAPE_KIND[s.cell_shape[cell]]) - dc.FIRST_GOAL_KIND
        self.known = [self.revealed.get(slot, int(view.my_peeks[slot]) if view.my_peeks[slot] >= 0 else None)
                      for slot in range(SLOTS)]  # fmt: skip
        maze = np.zeros(dc.NUM_DECK_KINDS, dtype=np.int64)
        for cell in np.flatnonzero(s.cell_shape >= 0).tolist():
            kind = int(dc.SHAPE_KIND[s.cell_shape[cell]])
            if kind < dc.NUM_DECK_KINDS:
                maze[kind] += 1
        seen = maze + self.face_up + self.own_face_down + view.hand
        self.unseen = np.maximum(dc.DECK_COUNTS - self.cards_out - seen, 0)
        self.opp_hand = int(view.hand_sizes[1])
        self.consistent = int(self.unseen.sum()) == view.deck_size + self.opp_hand + self.opp_face_down
        return self

    # ---- read-outs ----
    def pool(self) -> list[int]:
        return [g for g in range(dc.NUM_GOALS) if g not in self.goals_out]

    def goal_probabilities(self) -> NDArray[np.float64]:
        """(6 slots, 18 goals) P(slot holds goal g)."""
        pool = self.pool()
        known = [g if g is not None and g in pool else None for g in self.known]
        return slot_goal_probabilities(pool, known)

    def expected_nuggets(self) -> NDArray[np.float64]:
        """(6,) expected nuggets of each goal slot (revealed slots: their own nuggets)."""
        return self.goal_probabilities() @ NUGGETS

    def opponent_hand(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """(expected count per card kind, P(holds at least one)) of the opponent's hand."""
        return hand_distribution(self.unseen, min(self.opp_hand, int(self.unseen.sum())))


__all__ = ["DuelBelief", "brute_force_slot_goals", "hand_distribution", "slot_goal_probabilities"]


def bench(games: int = 4) -> dict:
    """Cost of one :meth:`DuelBelief.update` plus both read-outs per decision in seeded greedy duels."""
    import time

    from agents.registry import make_agent
    from saboteur_env import raw_env

    env = raw_env(game="duel")
    times: list[float] = []
    for seed in range(games):
        env.reset(seed=seed)
        agents = [make_agent("greedy", env.config) for _ in range(2)]
        beliefs = [DuelBelief(env.config, i) for i in range(2)]
        for i, a in enumerate(agents):
            a.reset(i, 2, seed)
        for name in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            seat = env.possible_agents.index(name)
            view = DuelView.from_observation(obs["observation"], env.config, seat)
            start = time.perf_counter()
            beliefs[seat].update(view)
            beliefs[seat].goal_probabilities()
            beliefs[seat].opponent_hand()
            times.append(time.perf_counter() - start)
            action = agents[seat].act(obs["observation"], obs["action_mask"])
            beliefs[seat].note_action(action)
            env.step(action)
    t = np.array(times) * 1e3
    return {"decisions": len(t), "mean_ms": round(float(t.mean()), 3), "p95_ms": round(float(np.percentile(t, 95)), 3),
            "max_ms": round(float(t.max()), 3)}  # fmt: skip


if __name__ == "__main__":
    print(bench())
