"""Determinization: full game states consistent with one seat's information set, built from its views only.

A :class:`Determinizer` follows one seat through the game (``observe(observation)`` at each of its decisions, or
more often) and ``sample(rng)`` returns a complete game state on the compiled core in which that seat's
observation is exactly the one it last saw: same board, own hand, public counts, event history. Everything the
seat cannot see is drawn:

* roles (and the left-over role card / the Saboteur 2 reserve) from a :class:`RoleSampler` - the exact Bayes
  posterior of :class:`agents.base.beliefs.BayesModel` in the base game (which also draws the gold slot),
  uniform over the role assignments consistent with the view in Saboteur 2 (the Duel has no roles);
* other hands, the draw pile, other seats' face-down discards (and Saboteur 2's set-aside cards) from the unseen
  cards: the round's deck composition minus everything public this round and the own hand and discards;
* face-down goals the seat has not seen; later rounds' set-up (fresh shuffles).

Nothing here reads a game state: the input is the observation vector (decoded through the game's view class) and
the seat's own memory of public events (the observation only carries the last ``history_length`` of them, so the
determinizer keeps the log; events it missed are treated as unknown and the card pool is reconciled by count).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from agents.base.analysis import board_from_view
from agents.base.beliefs import BayesModel
from agents.base.tracker import ViewTracker
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
from saboteur_env.duel import board as dboard
from saboteur_env.duel import cards as dc
from saboteur_env.duel.observation import duel_observation_layout
from saboteur_env.duel.state import DuelEvent
from saboteur_env.duel.view import DuelView
from saboteur_env.sab2 import board as sb
from saboteur_env.sab2 import cards as sc
from saboteur_env.sab2.actions import KIND_BROKEN as SAB2_BROKEN
from saboteur_env.sab2.actions import X
from saboteur_env.sab2.observation import _STATIC as SAB2_STATIC  # per-shape static planes of the observation
from saboteur_env.sab2.observation import sab2_observation_layout
from saboteur_env.sab2.state import Phase, Sab2Event
from saboteur_env.sab2.view import Sab2View

__all__ = [
    "BaseDeterminizer",
    "BayesRoleSampler",
    "Determinizer",
    "EventLog",
    "RoleSample",
    "RoleSampler",
    "make_determinizer",
]

UNKNOWN = -2  # event type of a row the seat never saw (older than its history window when it looked)


def _fresh_record(config: GameConfig, rng: np.random.Generator) -> Any:
    """A new game's record (``GameState`` / ``Sab2State`` / ``DuelState``) drawn by the compiled core: the same
    draws as the rules' set-up, as the record a determinization fills in."""
    return config.variant.new_game(config, rng).to_reference()


class EventLog:
    """Every public event of the game seen by one seat, in absolute seats: rows ``(type, actor, kind, target,
    cell, arg)`` as the engine logs them, ``kind = -1`` for another seat's face-down discard and ``type =
    UNKNOWN`` for events that scrolled out of the history window between two looks."""

    def __init__(self, config: GameConfig, seat: int) -> None:
        self.config = config
        self.seat = seat
        self.rows: list[tuple[int, int, int, int, int, int]] = []

    def update(self, view: PlayerView) -> None:
        new = view.event_count - len(self.rows)
        if new <= 0:
            return
        history = view.history
        missed = max(0, new - len(history))
        self.rows.extend([(UNKNOWN, -1, -1, -1, -1, -1)] * missed)
        p, cols, seat = self.config.num_players, self.config.cols, self.seat
        for ev in history[len(history) - (new - missed) :]:
            self.rows.append((
                int(ev.type),
                (seat + ev.actor) % p if ev.actor >= 0 else -1,
                ev.kind,
                (seat + ev.target) % p if ev.target >= 0 else -1,
                ev.row * cols + ev.col if ev.row >= 0 else -1,
                ev.arg,
            ))  # fmt: skip

    def round_rows(self, round_index: int) -> tuple[list[tuple[int, int, int, int, int, int]], bool]:
        """The rows of round ``round_index`` (the current one) and whether they are surely all of them."""
        ends = [i for i, r in enumerate(self.rows) if r[0] == EventType.ROUND_END]
        if len(ends) == round_index:
            rows = self.rows[ends[-1] + 1 :] if ends else self.rows
            return rows, all(r[0] != UNKNOWN for r in rows)
        # a round end scrolled away unseen: only the rows after the last unknown one are surely of this round
        last_unknown = max((i for i, r in enumerate(self.rows) if r[0] == UNKNOWN), default=-1)
        return self.rows[last_unknown + 1 :], False


@dataclass(frozen=True)
class RoleSample:
    """One draw of the hidden roles: ``roles`` per absolute seat, ``rest`` the role cards left undealt (the base
    game's left-over card, Saboteur 2's reserve in order), ``gold`` a goal slot drawn jointly (None: not drawn)."""

    roles: tuple[int, ...]
    rest: tuple[int, ...]
    gold: int | None = None


class RoleSampler(Protocol):
    """Where determinizations get their roles (belief models plug in here). ``observe`` is called with every view
    the seat gets (in order); ``sample_roles`` draws one assignment consistent with the latest view."""

    def observe(self, view: Any) -> None: ...

    def sample_roles(self, view: Any, rng: np.random.Generator) -> RoleSample: ...


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


class Determinizer(Protocol):
    def observe(self, observation: NDArray[np.float32]) -> Any: ...

    def sample(self, rng: np.random.Generator) -> Any: ...


def _deal(pool: NDArray[np.int64], sizes: Sequence[int], rng: np.random.Generator) -> list[NDArray[np.int64]]:
    """Shuffle ``pool`` (card kinds) and cut it into parts of ``sizes`` (the last part takes the rest)."""
    pool = rng.permutation(pool)
    out, pos = [], 0
    for n in sizes:
        out.append(pool[pos : pos + n])
        pos += n
    out.append(pool[pos:])
    return out


def _reconcile(pool: NDArray[np.int64], need: int, full: NDArray[np.int64], rng: np.random.Generator) -> NDArray:
    """A pool of exactly ``need`` cards: drop random cards or add random ones of the deck composition ``full``
    (only when the seat missed events of this round and the public record of played cards is incomplete)."""
    if pool.size > need:
        return rng.permutation(pool)[:need]
    if pool.size < need:
        extra = rng.choice(np.repeat(np.arange(full.size), full), size=need - pool.size, replace=False)
        return np.concatenate([pool, extra])
    return pool


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


def _new_events(old: list[Any], window: list[Any], length: int) -> int:
    """How many rows at the end of ``window`` are new since the history window ``old`` (games whose observation
    has no event count): the smallest shift that lines the two windows up (a full window that did not change
    counts as no news)."""
    if len(old) < length:  # the old window was not full: it held every event so far
        return len(window) - len(old) if window[: len(old)] == old else len(window)
    for d in range(0 if window == old else 1, len(window) + 1):
        if old[d:] == window[: len(window) - d]:
            return d
    return len(window)


class UniformSab2Roles:
    """Saboteur 2: roles uniform over the assignments consistent with the view - the seat's own role, roles it
    inspected (while their holders have not swapped hats since), every role once the round's roles are public -
    with the reserve drawn from the remaining role cards. A belief model (``agents/sab2/beliefs.py``) can replace
    it through the :class:`RoleSampler` interface."""

    def __init__(self, config: GameConfig, seat: int) -> None:
        self.config, self.seat = config, seat

    def observe(self, view: Any) -> None:
        pass

    def sample_roles(self, view: Any, rng: np.random.Generator) -> RoleSample:

        p, me = self.config.num_players, self.seat
        known: dict[int, int] = {0: int(view.role)}
        for k in range(1, p):
            seen = view.inspected_roles[k]
            if seen is not None and not view.hats_swapped[k]:
                known[k] = int(seen)
        cards = list(sc.ROLE_DECK.tolist())
        for r in known.values():
            cards.remove(r)
        cards = rng.permutation(np.array(cards, dtype=np.int64)).tolist()
        roles = [0] * p
        for k in range(p):
            roles[(me + k) % p] = known[k] if k in known else cards.pop()
        return RoleSample(tuple(roles), tuple(cards[: view.reserve_size]))


def _sab2_shape_lookup() -> dict[bytes, int]:
    """Shape id by what the observation shows of a cell: static planes, path card, revealed gold or stone."""

    out: dict[bytes, int] = {}
    for sid in range(2 * sc.NUM_KINDS):
        if sc.SPECS[sid // 2] is None:
            continue
        kind = sid // 2
        extra = [kind < sc.NUM_PATH_KINDS, kind == sc.KIND_GOALS[0], kind in sc.KIND_GOALS[1:]]
        out.setdefault(np.concatenate([SAB2_STATIC[sid], extra]).astype(np.uint8).tobytes(), sid)
    return out


class Sab2Determinizer:
    """Saboteur 2 (turn, pass and option C decisions): see the module docstring. Roles come from ``roles`` (a
    :class:`RoleSampler`, :class:`UniformSab2Roles` by default); the round's hidden cards (other hands, the
    pile, the 10 cards set aside, every face-down discard) from the unseen cards. The theft phase is not
    determinized (its only decision is whom to steal from)."""

    _LOOKUP: dict[bytes, int] | None = None

    def __init__(self, config: GameConfig, seat: int, roles: RoleSampler | None = None) -> None:
        self.config, self.seat = config, seat
        self.roles: RoleSampler = roles if roles is not None else UniformSab2Roles(config, seat)
        self.rows: list[tuple[int, int, int, int, int, int]] = []
        self.window: list[tuple[int, int, int, int, int, int]] = []
        self.view: Any = None
        self.obs: NDArray[np.float32] = np.zeros(0, dtype=np.float32)

    def observe(self, observation: NDArray[np.float32]) -> Any:

        view = Sab2View.from_observation(observation, self.config, self.seat)
        p, me = self.config.num_players, self.seat

        def ab(offset: int | None) -> int:
            return -1 if offset is None else (me + offset) % p

        window = [(int(e.type), ab(e.actor), -1 if e.kind is None else e.kind, ab(e.target),
                   -1 if e.cell is None else e.cell, e.arg) for e in view.events]  # fmt: skip
        shift = _new_events(self.window, window, self.config.history_length)
        if shift > 0:
            self.rows.extend(window[len(window) - shift :])
        self.window, self.view = window, view
        self.obs = np.asarray(observation, dtype=np.float32)
        self.roles.observe(view)
        return view

    def _board(self, view: Any) -> NDArray[np.int16]:

        if Sab2Determinizer._LOOKUP is None:
            Sab2Determinizer._LOOKUP = _sab2_shape_lookup()
        lookup = Sab2Determinizer._LOOKUP
        cfg = self.config
        board = sab2_observation_layout(cfg).split(self.obs)["board"].reshape(31, -1) > 0.5
        planes = np.concatenate([board[0:4], board[8:25], board[25:26], board[27:29]]).T.astype(np.uint8)
        shape = np.full(cfg.num_cells, -1, dtype=np.int16)
        for cell in np.flatnonzero(planes.any(axis=1)).tolist():
            sid = lookup.get(planes[cell].tobytes())
            if sid is None:
                raise ValueError(f"cell {cell} of the Saboteur 2 view matches no card shape")
            shape[cell] = sid
        return shape

    def sample_reference(self, rng: np.random.Generator) -> Any:

        view = self.view
        if view is None:
            raise ValueError("sample() needs observe(observation) first")
        if view.phase == Phase.THEFT:
            raise ValueError("the theft phase is not determinized (its roles and payouts are public)")
        cfg, me = self.config, self.seat
        p = cfg.num_players
        ab = [(me + k) % p for k in range(p)]
        s = _fresh_record(cfg, rng)
        rnd = view.round
        s.round = rnd
        ends = [i for i, r in enumerate(self.rows) if r[0] == Sab2Event.ROUND_END]
        rows = self.rows[ends[-1] + 1 :] if ends else self.rows
        # ---- roles ----
        rs = self.roles.sample_roles(view, rng)
        s.roles = np.array(rs.roles, dtype=np.int8)
        s.roles[me] = int(view.role)
        reserve = list(rs.rest)[: view.reserve_size]
        used = list(sc.ROLE_DECK.tolist())
        for r in s.roles.tolist() + reserve:
            if r in used:
                used.remove(r)
        s.reserve_pos = len(sc.ROLE_DECK) - view.reserve_size
        line = s.roles.tolist() + used
        s.round_roles[rnd] = np.array((line[: s.reserve_pos] + reserve + used)[: len(sc.ROLE_DECK)], dtype=np.int8)
        s.hats_swapped = np.array([view.hats_swapped[(q - me) % p] for q in range(p)])
        s.inspections = np.zeros((p, p), dtype=bool)
        s.inspected = np.full((p, p), -1, dtype=np.int8)
        for i in range(p):
            for j in range(p):
                if view.inspections[i, j]:
                    s.inspections[ab[i], ab[j]] = True
                    s.inspected[ab[i], ab[j]] = s.roles[ab[j]]
        for k in range(p):
            seen = view.inspected_roles[k]
            s.inspected[me, ab[k]] = -1 if seen is None else int(seen)
        # ---- board and goals ----
        shape = self._board(view)
        geo = bboard.geometry(cfg)
        s.cell_shape = shape
        s.reach = sb.reach(shape, geo.nbr_list, geo.start_cell)
        s.goal_revealed = np.array([bool(x) for x in view.goal_revealed])
        goal_kind = np.array([shape[c] // 2 if shape[c] >= 0 else -1 for c in geo.goal_cells], dtype=np.int16)
        if "gold" not in [("gold" if k == sc.KIND_GOALS[0] else "") for k in goal_kind.tolist()]:
            gold = [g for g, k in enumerate(view.goal_knowledge) if k == "gold"]
            open_ = [g for g, k in enumerate(view.goal_knowledge) if k is None]
            goal_kind[gold[0] if gold else int(rng.choice(open_))] = sc.KIND_GOALS[0]
        stones = [k for k in sc.KIND_GOALS[1:] if k not in goal_kind.tolist()]
        free = [g for g in range(3) if goal_kind[g] < 0]
        goal_kind[free] = rng.permutation(np.array(stones, dtype=np.int16))[: len(free)]
        s.goal_kind = goal_kind
        s.round_goals[rnd] = goal_kind
        # ---- cards ----
        full = sc.DECK_COUNTS.astype(np.int64)
        out = np.zeros(sc.NUM_DECK_KINDS, dtype=np.int64)
        discards = np.zeros(sc.NUM_DECK_KINDS, dtype=np.int64)
        played = (Sab2Event.PLACE, Sab2Event.BREAK, Sab2Event.REPAIR, Sab2Event.ROCKFALL, Sab2Event.MAP,
                  Sab2Event.THEFT, Sab2Event.HANDS_OFF, Sab2Event.SWAP_HAND, Sab2Event.INSPECTION,
                  Sab2Event.SWAP_HATS, Sab2Event.TRAPPED, Sab2Event.FREE_AT_LAST)  # fmt: skip
        for t, _actor, kind, _target, _cell, arg in rows:
            if t in played and 0 <= kind < sc.NUM_DECK_KINDS:
                out[kind] += 1
                if t not in (Sab2Event.PLACE, Sab2Event.BREAK, Sab2Event.THEFT, Sab2Event.TRAPPED):
                    discards[kind] += 1
            if t == Sab2Event.REPAIR:
                discards[SAB2_BROKEN[arg]] += 1
            elif t == Sab2Event.ROCKFALL and 0 <= arg < sc.NUM_DECK_KINDS:
                discards[arg] += 1
            elif t == Sab2Event.HANDS_OFF:
                discards[X["theft"]] += 1
            elif t == Sab2Event.FREE_AT_LAST:
                discards[X["trapped"]] += 1
            elif t == Sab2Event.FREE:
                discards[X["trapped"] if arg == 3 else SAB2_BROKEN[arg]] += 1
        sizes = [int(view.hand_sizes[k]) for k in range(1, p)]
        hidden = int(np.sum(view.discarded))
        need = sum(sizes) + view.deck_size + sc.REMOVED_PER_ROUND + hidden
        pool = np.repeat(np.arange(sc.NUM_DECK_KINDS), np.maximum(full - out - view.hand, 0))
        pool = _reconcile(pool, need, full, rng)
        parts = _deal(pool, [*sizes, sc.REMOVED_PER_ROUND, hidden], rng)
        s.hands = np.zeros((p, sc.NUM_DECK_KINDS), dtype=np.int16)
        s.hands[me] = view.hand
        for k in range(1, p):
            s.hands[ab[k]] = np.bincount(parts[k - 1], minlength=sc.NUM_DECK_KINDS)
        aside, face_down, pile = parts[p - 1], parts[p], parts[p + 1]
        discards += np.bincount(face_down, minlength=sc.NUM_DECK_KINDS)
        s.discards = discards.astype(np.int16)
        width = s.round_decks.shape[1]
        s.deck_pos = width - view.deck_size
        drawn = np.maximum(full - np.bincount(np.concatenate([aside, pile]), minlength=sc.NUM_DECK_KINDS), 0)
        middle = rng.permutation(np.repeat(np.arange(sc.NUM_DECK_KINDS), drawn))[: s.deck_pos - sc.REMOVED_PER_ROUND]
        s.round_decks[rnd] = np.concatenate([aside, middle, pile]).astype(np.int16)

        # ---- seat rows ----
        def absolute(a: Any) -> NDArray[Any]:
            return np.array([a[(q - me) % p] for q in range(p)])

        s.broken = absolute(view.broken).astype(bool)
        s.trapped = absolute(view.trapped).astype(bool)
        s.theft = absolute(view.theft).astype(bool)
        s.peeked = absolute(view.peeked).astype(bool)
        s.discarded = absolute(view.discarded).astype(np.int16)
        s.gold = absolute(view.gold).astype(np.int32)
        s.stolen_held = np.zeros(p, dtype=np.int32)
        for t, actor, *_ in self.rows:
            if t == Sab2Event.STEAL and actor >= 0:
                s.stolen_held[actor] += 1
        s.stolen_held = np.minimum(s.stolen_held, s.gold)
        s.theft_time = np.full(p, -1, dtype=np.int32)
        for i, (t, actor, *_) in enumerate(rows):
            if t == Sab2Event.THEFT and actor >= 0:
                s.theft_time[actor] = i
        for q in np.flatnonzero(s.theft & (s.theft_time < 0)).tolist():
            s.theft_time[q] = 0
        # ---- turn, phase, log ----
        s.current = ab[view.to_act] if view.to_act is not None else me
        s.phase = view.phase
        mine = s.current == me
        s.pending = view.pending if mine else 0
        s.free_target = view.free_target if mine and view.free_target is not None else -1
        if s.phase == Phase.FREE and not mine:
            s.phase = Phase.TURN  # another seat's option C in progress: its own discards are its business
        if s.phase == Phase.PASS and not mine:
            s.phase = Phase.TURN
        s.thieves, s.finder = [], -1
        acted = (*played, Sab2Event.DISCARD)
        s.last_player = next((actor for t, actor, *_ in reversed(rows) if actor >= 0 and t in acted), s.current)
        s.events = list(self.window)
        s.round_first_event = 0
        s.num_decisions = len(self.rows)
        last = view.last_roles
        if rnd > 0:
            roles = [int(last[(q - me) % p]) for q in range(p)] if last is not None else s.roles.tolist()
            s.round_results = [{"round": r, "gold_reached": False, "finder": None, "open_blue": False,
                                "open_green": False, "roles": roles, "trapped": [False] * p, "winners": [0] * p,
                                "payouts": [0] * p, "gold": s.gold.tolist(), "gained": [0] * p}
                               for r in range(rnd)]  # fmt: skip
            s.round_summary = dict(s.round_results[-1])  # the core reads the latest roles from the summary
            s.round_start_gold = s.gold.copy()
        s.last_rewards = np.zeros(p)
        s.board_changed()
        return s

    def sample(self, rng: np.random.Generator) -> Any:
        s = self.sample_reference(rng)
        adopt = getattr(self.config.variant, "adopt", None)
        return s if adopt is None else adopt(s)


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


def make_determinizer(config: GameConfig, seat: int, roles: RoleSampler | None = None) -> Determinizer:
    """The determinizer of ``config.game`` for ``seat``."""
    if config.game == "sab2":
        return Sab2Determinizer(config, seat, roles)
    if config.game == "duel":
        return DuelDeterminizer(config, seat)
    return BaseDeterminizer(config, seat, roles)
