"""The one gate for hidden information: per-seat observations, and their decoding into a :class:`PlayerView`.

``encode_observation(state, seat)`` is the only function that reads the full state on behalf of a seat. Text
rendering from a seat's perspective and the heuristic agents decode that observation with
:meth:`PlayerView.from_observation`, so nothing a seat may not see can reach them.

Observation layout (float32 vector; ``P`` players, ``R x C`` playable cells, ``L`` = ``history_length``).
Seat-relative: offset 0 = the observing seat, offset k = the k-th seat clockwise from it.

====================  ==================  ======================================================================
name                  shape               content
====================  ==================  ======================================================================
``board``             ``(26, R, C)``      planes, see ``PLANES``: open edges N/E/S/W; arm connected to the start
                                          N/E/S/W; joined edge pairs NE/NS/NW/ES/EW/SW (the card's tunnels);
                                          dead-end stubs N/E/S/W; start; placed path card; face-down goal;
                                          revealed gold goal; revealed stone goal; empty cell; goal I peeked
                                          = gold; goal I peeked = stone
``role``              ``(2,)``            my role one-hot: gold-digger, saboteur
``hand``              ``(27,)``           my hand as counts per card kind (``cards`` kinds 0-26)
``seats``             ``(P, 11)``         per seat offset (row 0 = me), columns ``SEAT_COLUMNS``: broken pickaxe,
                                          lantern, cart; hand size; gold cards won (public count); used a map on
                                          goal slot 0/1/2 this round; role revealed at the end of the previous
                                          round (gold-digger, saboteur; zeros before the first round end); cards
                                          discarded face down this round
``deck_size``         ``(1,)``            cards left in the draw pile
``gold_deck_size``    ``(1,)``            gold cards left in the gold deck
``round``             ``(3,)``            round one-hot
``to_act``            ``(P,)``            seat offset to act, one-hot
``my_nuggets``        ``(1,)``            my gold so far (private)
``event_count``       ``(1,)``            public events so far in the game (tells agents which history rows are new)
``history``           ``(L, F)``          last public events, oldest first (row L-1 = newest); ``F = 73 + 2 P``
====================  ==================  ======================================================================

History row (``EVENT_LAYOUT``): ``valid`` (1), ``type`` one-hot (8, ``state.EventType``), ``actor`` offset
one-hot (P), ``kind`` one-hot (31, card kind; zero for another seat's face-down discard), ``target`` offset
one-hot (P), ``row``/``col`` (2, storage coordinates scaled to 0..1; zero without a cell), ``arg`` one-hot (31):
rotation for PLACE/REVEAL, tool for BREAK/REPAIR, goal slot for MAP, removed card kind for ROCKFALL, 0 = diggers
won / 1 = saboteurs won for ROUND_END.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np
from numpy.typing import NDArray

from saboteur_env.base import board
from saboteur_env.base.cards import (
    GOAL_KINDS,
    KIND_GOAL_GOLD,
    NUM_DECK_KINDS,
    NUM_KINDS,
    deck_counts,
)
from saboteur_env.base.state import EventType, GameState, max_events_per_round
from saboteur_env.common.config import GameConfig
from saboteur_env.common.slices import named_slices

PLANES = (
    "open_n", "open_e", "open_s", "open_w",
    "conn_n", "conn_e", "conn_s", "conn_w",
    "join_ne", "join_ns", "join_nw", "join_es", "join_ew", "join_sw",
    "stub_n", "stub_e", "stub_s", "stub_w",
    "start", "path", "goal_facedown", "goal_gold", "goal_stone", "empty",
    "peeked_gold", "peeked_stone",
)  # fmt: skip
NUM_PUBLIC_PLANES = board.NUM_PUBLIC_PLANES
SEAT_COLUMNS = (
    "broken_pickaxe", "broken_lantern", "broken_cart", "hand_size", "gold_cards",
    "peeked_0", "peeked_1", "peeked_2", "last_role_digger", "last_role_saboteur", "discarded",
)  # fmt: skip
NUM_EVENT_TYPES = len(EventType)
_WEIGHTS = (1 << np.arange(6)).astype(np.float32)
_DISCARD = int(EventType.DISCARD)



class ObservationLayout:
    """Named slices of the flat observation for one configuration."""

    def __init__(self, config: GameConfig) -> None:
        p, hw, L = config.num_players, config.num_cells, config.history_length
        self.config = config
        self.num_players, self.history_length = p, L
        self.event_size = 1 + NUM_EVENT_TYPES + p + NUM_KINDS + p + 2 + NUM_KINDS
        ev = {}
        pos = 0
        for name, size in (("valid", 1), ("type", NUM_EVENT_TYPES), ("actor", p), ("kind", NUM_KINDS),
                           ("target", p), ("row", 1), ("col", 1), ("arg", NUM_KINDS)):  # fmt: skip
            ev[name] = pos
            pos += size
        self.event_offsets = ev
        self.shapes: dict[str, tuple[int, ...]] = {
            "board": (len(PLANES), config.rows, config.cols),
            "role": (2,),
            "hand": (NUM_DECK_KINDS,),
            "seats": (p, len(SEAT_COLUMNS)),
            "deck_size": (1,),
            "gold_deck_size": (1,),
            "round": (3,),
            "to_act": (p,),
            "my_nuggets": (1,),
            "event_count": (1,),
            "history": (L, self.event_size),
        }
        self.slices, self.size = named_slices(self.shapes)
        # The parts of a block's last axis, for blocks whose rows mix seat-sized one-hots with fixed fields (what a
        # network that reads every player count, agents.universal, needs to line the counts up).
        self.row_parts: dict[str, tuple[int, ...]] = {
            "history": (1, NUM_EVENT_TYPES, p, NUM_KINDS, p, 1, 1, NUM_KINDS),
        }
        self.off = {name: s.start for name, s in self.slices.items()}
        self.hw = hw
        # Upper bounds per element (observations are non-negative).
        high = np.ones(self.size, dtype=np.float32)
        cards = int(deck_counts(config).sum())  # the round's deck (67 in the box)
        high[self.slices["hand"]] = cards
        seats = high[self.slices["seats"]].reshape(p, len(SEAT_COLUMNS))
        seats[:, SEAT_COLUMNS.index("hand_size")] = cards
        seats[:, SEAT_COLUMNS.index("gold_cards")] = 28
        seats[:, SEAT_COLUMNS.index("discarded")] = cards
        high[self.slices["deck_size"]] = cards
        high[self.slices["gold_deck_size"]] = 28
        high[self.slices["my_nuggets"]] = 1000
        high[self.slices["event_count"]] = config.rounds * max_events_per_round(cards)
        self.high = high
        # Event rows for every viewer: actor/target one-hots by absolute seat x for viewer v at (x - v) % P.
        geo = board.geometry(config)
        self.cell_rowcol = np.stack(
            [geo.row_of / max(1, geo.rows - 1), geo.col_of / max(1, geo.cols - 1)], axis=1
        ).astype(np.float32)
        self.seat_onehots = np.zeros((p, p, p), dtype=np.float32)
        for x in range(p):
            for v in range(p):
                self.seat_onehots[x, v, (x - v) % p] = 1

    def split(self, obs: NDArray[np.float32]) -> dict[str, NDArray[np.float32]]:
        """Named, reshaped views of a flat observation."""
        return {name: obs[s].reshape(self.shapes[name]) for name, s in self.slices.items()}


def observation_layout(config: GameConfig) -> ObservationLayout:
    """The observation layout of a base-game configuration (built once per config object)."""
    return config.cached("_observation_layout", ObservationLayout)


def public_board_planes(state: GameState) -> NDArray[np.float32]:
    """The 24 public planes, flat ``(24 * HW,)`` (maintained by ``board``; a read-only view)."""
    return state.planes.ravel()


def encode_event(state: GameState, etype: int, actor: int, kind: int, target: int, cell: int, arg: int) -> None:
    """Append one public event to the per-viewer history ring (called by the rules for every event).

    Each event is encoded once for all viewers, so building an observation only copies rows. Another seat's
    face-down discard shows no card kind.
    """
    lay = cast(ObservationLayout, state.obs_layout)  # this module's layout (the state types it by the protocol)
    L = lay.history_length
    if L == 0:
        return
    eo = lay.event_offsets
    p = lay.num_players
    discard = etype == _DISCARD
    row = np.zeros(lay.event_size, dtype=np.float32)  # what every viewer sees, before seat-relative parts
    row[eo["valid"]] = 1.0
    row[eo["type"] + etype] = 1.0
    if kind >= 0 and not discard:
        row[eo["kind"] + kind] = 1.0
    if arg >= 0:
        row[eo["arg"] + arg] = 1.0
    if cell >= 0:
        row[eo["row"] : eo["row"] + 2] = lay.cell_rowcol[cell]
    pos = state.hist_pos
    rows = state.hist_ring[:, pos]
    rows[:] = row
    rows[:, eo["actor"] : eo["actor"] + p] = lay.seat_onehots[actor]
    if kind >= 0 and discard:
        rows[actor, eo["kind"] + kind] = 1.0  # a face-down discard: only the discarder sees the card
    if target >= 0:
        rows[:, eo["target"] : eo["target"] + p] = lay.seat_onehots[target]
    state.hist_ring[:, pos + L] = rows
    state.hist_pos = (pos + 1) % L


def rebuild_history(state: GameState) -> None:
    """Re-encode the history ring from ``state.events`` (hand-built states, consistency checks)."""
    state.hist_ring[:] = 0.0
    state.hist_pos = 0
    for row in state.events[: state.num_events].tolist():
        encode_event(state, *row)


def set_seat_value(state: GameState, seat: int, column: int, value: float) -> None:
    """Update one entry of the public per-seat table (both copies)."""
    state.seat_table[seat, column] = value
    state.seat_table[seat + state.config.num_players, column] = value


def refresh_seat_table(state: GameState) -> None:
    """Recompute the public per-seat table after an action (absolute seats; rows P..2P-1 repeat 0..P-1)."""
    p = state.config.num_players
    t = state.seat_table[:p]
    t[:, 0:3] = state.broken
    t[:, 3] = state.hands.sum(axis=1)
    t[:, 4] = state.gold_cards
    t[:, 5:8] = state.peeked
    t[:, 8] = state.last_round_roles == 0
    t[:, 9] = state.last_round_roles == 1
    t[:, 10] = state.discarded
    state.seat_table[p:] = t


def encode_observation(state: GameState, seat: int) -> NDArray[np.float32]:
    """The observation of ``seat``: public information plus that seat's private information only."""
    lay = cast(ObservationLayout, state.obs_layout)  # this module's layout (the state types it by the protocol)
    p, hw, off = lay.num_players, lay.hw, lay.off
    out = np.zeros(lay.size, dtype=np.float32)
    out[: NUM_PUBLIC_PLANES * hw] = state.planes.ravel()
    peeked = state.peeked[seat].tolist()
    if True in peeked:
        geo = state.geo
        for slot in range(3):
            if peeked[slot]:
                plane = 24 if state.goal_kind[slot] == KIND_GOAL_GOLD else 25
                out[plane * hw + geo.goal_cells[slot]] = 1.0
    out[off["role"] + int(state.roles[seat])] = 1.0
    out[off["hand"] : off["seats"]] = state.hands[seat]
    # seat_table holds the P seat rows twice, so the seat-relative order is one contiguous slice.
    out[off["seats"] : off["deck_size"]] = state.seat_table[seat : seat + p].ravel()
    out[off["deck_size"]] = state.round_decks.shape[1] - state.deck_pos
    out[off["gold_deck_size"]] = state.gold_deck_size
    out[off["round"] + state.round] = 1.0
    out[off["to_act"] + (state.current - seat) % p] = 1.0
    out[off["my_nuggets"]] = state.gold_nuggets[seat]
    out[off["event_count"]] = state.num_events
    L = lay.history_length
    if L:
        # The ring holds every row twice (at i and i + L): the last L events in order are one slice.
        pos = state.hist_pos
        out[off["history"] :] = state.hist_ring[seat, pos : pos + L].ravel()
    return out


def encode_state(state: GameState) -> NDArray[np.float32]:
    """Full state for centralised critics (NOT for agents): public planes, goal kinds, roles, left-over role,
    every hand, broken tools, draw pile contents, gold, round and seat to act; absolute seats."""
    cfg = state.config
    p = cfg.num_players
    goals = np.zeros((3, 3), dtype=np.float32)
    goals[np.arange(3), [GOAL_KINDS.index(int(k)) for k in state.goal_kind]] = 1
    roles = np.zeros((p + 1, 2), dtype=np.float32)
    roles[np.arange(p), state.roles] = 1
    roles[p, state.leftover_role] = 1
    pile = np.bincount(state.round_decks[state.round][state.deck_pos :], minlength=NUM_DECK_KINDS)
    rnd = np.zeros(3, dtype=np.float32)
    rnd[state.round] = 1
    act = np.zeros(p, dtype=np.float32)
    act[state.current] = 1
    return np.concatenate(
        [
            public_board_planes(state),
            goals.ravel(),
            roles.ravel(),
            state.hands.ravel(),
            state.broken.ravel(),
            pile,
            state.gold_nuggets,
            state.gold_cards,
            state.peeked.ravel(),
            rnd,
            act,
        ]
    ).astype(np.float32)


def decode_state(vector: NDArray[np.floating], config: GameConfig) -> dict[str, list[int] | int]:
    """Hidden facts from a :func:`encode_state` vector: ``roles`` per seat, ``leftover_role``, ``goal_kinds`` per
    goal slot (card kinds). For centralised critics and the clearly-named oracle agents only."""
    p = config.num_players
    start = NUM_PUBLIC_PLANES * config.num_cells
    goals = np.asarray(vector[start : start + 9]).reshape(3, 3).argmax(axis=1)
    roles = np.asarray(vector[start + 9 : start + 9 + 2 * (p + 1)]).reshape(p + 1, 2).argmax(axis=1)
    return {
        "roles": [int(r) for r in roles[:p]],
        "leftover_role": int(roles[p]),
        "goal_kinds": [int(GOAL_KINDS[g]) for g in goals],
    }


def state_size(config: GameConfig) -> int:
    p = config.num_players
    return (
        NUM_PUBLIC_PLANES * config.num_cells + 9 + 2 * (p + 1) + p * NUM_DECK_KINDS + 3 * p + NUM_DECK_KINDS
        + 2 * p + 3 * p + 3 + p
    )


# ---- decoding ----------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Event:
    """A decoded history event; offsets are relative to the observer, -1 when unused."""

    type: EventType
    actor: int
    kind: int
    target: int
    row: int
    col: int
    arg: int


@dataclass(frozen=True)
class PlayerView:
    """What one seat knows, decoded from its observation (seat-relative; offset 0 = me).

    Board grids have shape ``(R, C)`` in storage coordinates (frame cell ``(r, c)`` at ``(r + margin, c + margin)``).
    ``goal_knowledge[g]`` is ``"gold"``, ``"stone"`` or ``None`` (unknown) for goal slot g, counting what is face
    up and what I peeked.
    """

    config: GameConfig
    open_bits: NDArray[np.int64]
    conn_bits: NDArray[np.int64]
    join_bits: NDArray[np.int64]
    stub_bits: NDArray[np.int64]
    start: NDArray[np.bool_]
    path: NDArray[np.bool_]
    goal_facedown: NDArray[np.bool_]
    goal_gold: NDArray[np.bool_]
    goal_stone: NDArray[np.bool_]
    empty: NDArray[np.bool_]
    goal_knowledge: tuple[str | None, ...]
    role: int
    hand: NDArray[np.int64]
    broken: NDArray[np.bool_]  # (P, 3) per seat offset
    hand_size: NDArray[np.int64]  # (P,)
    deck_size: int
    gold_deck_size: int
    round: int
    to_act: int  # seat offset
    my_nuggets: int
    event_count: int  # public events so far in the game
    gold_cards: NDArray[np.int64]  # (P,)
    peeked: NDArray[np.bool_]  # (P, 3)
    discarded: NDArray[np.int64]  # (P,) cards discarded face down this round
    last_round_roles: tuple[int, ...]  # per seat offset: Role, or -1 unknown
    history: tuple[Event, ...]

    @classmethod
    def from_observation(cls, obs: NDArray[np.floating], config: GameConfig) -> PlayerView:
        lay = observation_layout(config)
        obs = np.asarray(obs)
        if obs.shape != (lay.size,):
            raise ValueError(f"observation has shape {obs.shape}; expected ({lay.size},) for {config}")
        parts = lay.split(obs)
        board_block = parts["board"]
        planes = board_block > 0.5
        flat = board_block.reshape(len(PLANES), -1)

        def bits(a: int, b: int) -> NDArray[np.int64]:
            return np.rint(_WEIGHTS[: b - a] @ flat[a:b]).astype(np.int64).reshape(config.rows, config.cols)

        geo = board.geometry(config)
        knowledge: list[str | None] = []
        for cell in geo.goal_cells:
            r, c = divmod(cell, config.cols)
            if planes[21, r, c] or planes[24, r, c]:
                knowledge.append("gold")
            elif planes[22, r, c] or planes[25, r, c]:
                knowledge.append("stone")
            else:
                knowledge.append(None)
        p = config.num_players
        history = _decode_history(parts["history"], lay, p, config)
        seats = parts["seats"]
        lrr = seats[:, 8:10]
        return cls(
            config=config,
            open_bits=bits(0, 4),
            conn_bits=bits(4, 8),
            join_bits=bits(8, 14),
            stub_bits=bits(14, 18),
            start=planes[18],
            path=planes[19],
            goal_facedown=planes[20],
            goal_gold=planes[21],
            goal_stone=planes[22],
            empty=planes[23],
            goal_knowledge=tuple(knowledge),
            role=int(np.argmax(parts["role"])),
            hand=parts["hand"].astype(np.int64),
            broken=seats[:, 0:3] > 0.5,
            hand_size=seats[:, 3].astype(np.int64),
            deck_size=int(parts["deck_size"][0]),
            gold_deck_size=int(parts["gold_deck_size"][0]),
            round=int(np.argmax(parts["round"])),
            to_act=int(np.argmax(parts["to_act"])),
            my_nuggets=int(parts["my_nuggets"][0]),
            event_count=int(parts["event_count"][0]),
            gold_cards=seats[:, 4].astype(np.int64),
            peeked=seats[:, 5:8] > 0.5,
            discarded=seats[:, 10].astype(np.int64),
            last_round_roles=tuple(int(np.argmax(r)) if r.any() else -1 for r in lrr),
            history=tuple(history),
        )


def _decode_history(
    block: NDArray[np.floating], lay: ObservationLayout, p: int, config: GameConfig
) -> tuple[Event, ...]:
    eo = lay.event_offsets
    rows = block[block[:, eo["valid"]] > 0.5]
    if rows.shape[0] == 0:
        return ()

    def onehot(start: int, size: int) -> list[int]:
        seg = rows[:, start : start + size]
        return np.where(seg.any(axis=1), seg.argmax(axis=1), -1).tolist()

    types = onehot(eo["type"], NUM_EVENT_TYPES)
    actors = onehot(eo["actor"], p)
    kinds = onehot(eo["kind"], NUM_KINDS)
    targets = onehot(eo["target"], p)
    args = onehot(eo["arg"], NUM_KINDS)
    rr = np.rint(rows[:, eo["row"]] * max(1, config.rows - 1)).astype(int).tolist()
    cc = np.rint(rows[:, eo["col"]] * max(1, config.cols - 1)).astype(int).tolist()
    out = []
    for i, t in enumerate(types):
        etype = EventType(t)
        has_cell = etype in (EventType.PLACE, EventType.ROCKFALL, EventType.REVEAL)
        out.append(
            Event(etype, actors[i], kinds[i], targets[i], rr[i] if has_cell else -1, cc[i] if has_cell else -1, args[i])
        )
    return tuple(out)


def player_view(state: GameState, seat: int) -> PlayerView:
    """The structured view of ``seat`` (built through the observation, so it cannot hold more)."""
    return PlayerView.from_observation(encode_observation(state, seat), state.config)
