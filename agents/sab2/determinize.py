"""Saboteur 2's determinizer (roles uniform over what the view allows): see ``agents.determinize``."""


from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from agents.determinize import RoleSample, RoleSampler, _deal, _fresh_record, _new_events, _reconcile
from saboteur_env import GameConfig
from saboteur_env.base import board as bboard
from saboteur_env.sab2 import board as sb
from saboteur_env.sab2 import cards as sc
from saboteur_env.sab2.actions import KIND_BROKEN as SAB2_BROKEN
from saboteur_env.sab2.actions import X
from saboteur_env.sab2.observation import _STATIC as SAB2_STATIC  # per-shape static planes of the observation
from saboteur_env.sab2.observation import sab2_observation_layout
from saboteur_env.sab2.state import Phase, Sab2Event
from saboteur_env.sab2.view import Sab2View


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
