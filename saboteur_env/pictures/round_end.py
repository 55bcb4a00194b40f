"""The exact board at the end of a round, rebuilt from a seat's view before the round's last move and that move's
public events.

The engines deal the next round inside the step that ends a round, so no view ever shows the last board. The public
event log holds every fact needed: the card placed (kind, cell, rotation), the card a rockfall removed, every goal
turned up (kind, cell, rotation) and tool changes. :func:`round_end_view` applies them to the board planes of the
view before the move (card shapes from the public card tables, connectivity recomputed from the start) and returns
a view of the same type, so every picture drawn from it is the one the seat would have seen at the round's end.
Only the view and its events are read, so nothing hidden can reach the result.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from saboteur_env.common.cards import EDGE_PAIRS, make_shape
from saboteur_env.common.geometry import geometry

__all__ = ["round_end_view"]

_STEP = ((-1, 0), (0, 1), (1, 0), (0, -1))  # N E S W as (dr, dc)


def _groups(join: int, open_: int) -> list[int]:
    """Per open arm, the bit set of arms sharing its tunnel (``join``: the EDGE_PAIRS bits)."""
    out = [0, 0, 0, 0]
    for e in range(4):
        if open_ >> e & 1:
            out[e] = 1 << e
    for _ in range(3):  # transitive closure over at most four arms
        for i, (a, b) in enumerate(EDGE_PAIRS):
            if join >> i & 1:
                out[a] = out[b] = out[a] | out[b]
    for e in range(4):
        for f in range(4):
            if out[e] >> f & 1:
                out[e] |= out[f]
    return out


def reach(open_bits: NDArray[np.int64], join_bits: NDArray[np.int64], seeds: Sequence[int],
          blocked: NDArray[np.int64] | None = None) -> NDArray[np.int64]:  # fmt: skip
    """Arms connected to ``seeds`` (flat cells whose open arms all count as connected) over a ``(rows, cols)``
    board of open arms and tunnel joins; an arm in ``blocked`` is reached but passes nothing on."""
    rows, cols = open_bits.shape
    ob, jb = open_bits.reshape(-1), join_bits.reshape(-1)
    stop = np.zeros_like(ob) if blocked is None else blocked.reshape(-1)
    groups = [_groups(int(jb[i]), int(ob[i])) for i in range(rows * cols)]
    conn = np.zeros(rows * cols, dtype=np.int64)
    todo: list[tuple[int, int]] = []
    for cell in seeds:
        for e in range(4):
            if ob[cell] >> e & 1:
                todo.append((cell, e))
    while todo:
        cell, e = todo.pop()
        if conn[cell] >> e & 1:
            continue
        new = groups[cell][e] & ~int(conn[cell]) if not stop[cell] >> e & 1 else 1 << e
        conn[cell] |= new
        for f in range(4):
            if not new >> f & 1 or stop[cell] >> f & 1:
                continue
            r, c = divmod(cell, cols)
            nr, nc = r + _STEP[f][0], c + _STEP[f][1]
            if 0 <= nr < rows and 0 <= nc < cols:
                j = nr * cols + nc
                g = (f + 2) % 4
                if ob[j] >> g & 1:
                    todo.append((j, g))
    return conn.reshape(rows, cols)


def _copy(view: Any, names: Sequence[str]) -> dict[str, NDArray[Any]]:
    return {n: np.array(getattr(view, n)) for n in names}


def round_end_view(view: Any, events: Sequence[Any], after: Any = None) -> Any:
    """The view ``view`` (before a round's last move) with that move's public ``events`` applied to its board.

    ``events``: the events of the seat's view that the last move added (oldest first); those after the round's end
    (payouts, thefts) change only the seats' gold. Two things no view can tell are left as before the move: what a
    seat's own map showed when that map was the round's last card (the next deal forgets it), and which cards a
    seat discarded face down (the Saboteur 2 and Duel event logs keep them private even from their owner).
    ``after``: the same seat's view after the move (the next deal), for what the round's end reveals to everyone
    (the Saboteur 2 roles); without it they stay as before.
    """
    game = view.config.game
    if after is not None and (after.config != view.config):
        raise ValueError("after must be a view of the same game as view")
    if game == "base":
        return _base(view, events)
    if game == "sab2":
        out = _sab2(view, events)
        return out if after is None else dataclasses.replace(out, last_roles=after.last_roles)
    if game == "duel":
        return _duel(view, events)
    raise ValueError(f"game={game!r} is not one of 'base', 'sab2', 'duel'")


def _base(view: Any, events: Sequence[Any]) -> Any:
    from saboteur_env.base import cards as bc
    from saboteur_env.base.state import EventType as E

    cfg = view.config
    a = _copy(view, ("open_bits", "conn_bits", "join_bits", "stub_bits", "start", "path", "goal_facedown",
                     "goal_gold", "goal_stone", "empty", "broken", "hand", "hand_size", "discarded"))  # fmt: skip
    f = {k: v.reshape(-1) for k, v in a.items() if k not in ("broken", "hand", "hand_size", "discarded")}
    goal_cells = list(geometry(cfg).goal_cells)
    knowledge = list(view.goal_knowledge)

    def clear(cell: int) -> None:
        for k in ("open_bits", "join_bits", "stub_bits"):
            f[k][cell] = 0
        for k in ("path", "goal_facedown", "goal_gold", "goal_stone"):
            f[k][cell] = False
        f["empty"][cell] = True

    def put(cell: int, kind: int, rot: int) -> None:
        spec = bc.SHAPE_SPECS[kind] if 0 <= kind < len(bc.SHAPE_SPECS) else None
        if spec is None:
            raise ValueError(f"event kind {kind} is not a card of the maze (valid: 0..{len(bc.SHAPE_SPECS) - 1}, "
                             "path, start or goal kinds)")  # fmt: skip
        shape = make_shape(kind, rot, spec)
        clear(cell)
        f["open_bits"][cell], f["join_bits"][cell], f["stub_bits"][cell] = shape.open_bits, shape.join_bits, \
            shape.stub_bits  # fmt: skip
        f["empty"][cell] = False

    for ev in events:
        if ev.type == E.ROUND_END:
            break
        if ev.type not in (E.REVEAL, E.ROUND_END) and ev.actor >= 0:
            a["hand_size"][ev.actor] -= 1  # the finder does not draw, and otherwise the deck is empty
            if ev.actor == 0 and ev.kind >= 0:
                a["hand"][ev.kind] -= 1
        if ev.type == E.DISCARD and ev.actor >= 0:
            a["discarded"][ev.actor] += 1
        cell = cfg.cell_index(ev.row, ev.col) if ev.type in (E.PLACE, E.ROCKFALL, E.REVEAL) else -1
        if ev.type == E.PLACE:
            put(cell, ev.kind, ev.arg)
            f["path"][cell] = True
        elif ev.type == E.ROCKFALL:
            clear(cell)
        elif ev.type == E.REVEAL:
            put(cell, ev.kind, ev.arg)
            gold = ev.kind == bc.KIND_GOAL_GOLD
            f["goal_gold" if gold else "goal_stone"][cell] = True
            knowledge[goal_cells.index(cell)] = "gold" if gold else "stone"
        elif ev.type in (E.BREAK, E.REPAIR):
            a["broken"][ev.target, ev.arg] = ev.type == E.BREAK
    a["conn_bits"] = reach(a["open_bits"], a["join_bits"], [geometry(cfg).start_cell])
    return dataclasses.replace(view, **a, goal_knowledge=tuple(knowledge))


def _sab2(view: Any, events: Sequence[Any]) -> Any:
    from saboteur_env.sab2 import cards as sc
    from saboteur_env.sab2.state import Sab2Event as E

    cfg = view.config
    a = _copy(view, ("open_bits", "conn_bits", "join_bits", "blue_door_bits", "green_door_bits", "ladder", "crystal",
                     "start", "path", "goal_facedown", "goal_gold", "goal_stone", "peeked_gold", "peeked_stone",
                     "broken", "trapped", "hand", "hand_sizes", "discarded", "gold"))  # fmt: skip
    seat_fields = ("broken", "trapped", "hand", "hand_sizes", "discarded", "gold")
    f = {k: v.reshape(-1) for k, v in a.items() if k not in seat_fields}
    goal_cells = list(geometry(cfg).goal_cells)
    revealed = list(view.goal_revealed)

    def clear(cell: int) -> None:
        for k in ("open_bits", "join_bits", "blue_door_bits", "green_door_bits"):
            f[k][cell] = 0
        for k in ("ladder", "crystal", "path", "goal_facedown", "goal_gold", "goal_stone", "peeked_gold",
                  "peeked_stone"):  # fmt: skip
            f[k][cell] = False

    def put(cell: int, kind: int, rot: int) -> None:
        spec = sc.SPECS[kind] if 0 <= kind < len(sc.SPECS) else None
        if spec is None:
            raise ValueError(f"event kind {kind} is not a card of the maze (valid: 0..{len(sc.SPECS) - 1}, "
                             "path, start or goal kinds)")  # fmt: skip
        shape = make_shape(kind, rot, spec)
        clear(cell)
        f["open_bits"][cell], f["join_bits"][cell] = shape.open_bits, shape.join_bits
        for edge, colour in spec.doors:
            f[f"{colour}_door_bits"][cell] |= 1 << ((edge + 2 * rot) % 4)
        f["ladder"][cell], f["crystal"][cell] = bool(spec.ladder), bool(spec.crystals)

    ended = False
    for ev in events:
        if ev.type == E.ROUND_END:
            ended = True
        if ev.type == E.PAYOUT and ev.target is not None:
            a["gold"][ev.target] += ev.arg
        elif ev.type == E.STEAL and ev.actor is not None and ev.target is not None:
            a["gold"][ev.actor] += 1
            a["gold"][ev.target] -= 1
        if ended:
            continue  # payouts and thefts after the round's end change no board
        if ev.type in _SAB2_CARD_PLAYED and ev.actor is not None:
            a["hand_sizes"][ev.actor] -= 1  # the round ends before the draw
            if ev.actor == 0 and ev.kind is not None and ev.kind < len(a["hand"]):
                a["hand"][ev.kind] -= 1
        if ev.type == E.DISCARD and ev.actor is not None:
            a["discarded"][ev.actor] += 1
        if ev.type == E.PLACE and ev.cell is not None and ev.kind is not None:
            put(ev.cell, ev.kind, ev.arg)
            f["path"][ev.cell] = True
        elif ev.type == E.ROCKFALL and ev.cell is not None:
            clear(ev.cell)
        elif ev.type == E.REVEAL and ev.cell is not None and ev.kind is not None:
            put(ev.cell, ev.kind, ev.arg)
            f["goal_gold" if ev.kind == sc.KIND_GOALS[0] else "goal_stone"][ev.cell] = True
            revealed[goal_cells.index(ev.cell)] = True
        elif ev.type in (E.BREAK, E.REPAIR) and ev.target is not None:
            a["broken"][ev.target, ev.arg] = ev.type == E.BREAK
        elif ev.type == E.FREE and ev.actor is not None:
            if ev.arg < 3:
                a["broken"][ev.actor, ev.arg] = False
            else:
                a["trapped"][ev.actor] = False
    seeds = [geometry(cfg).start_cell, *np.flatnonzero(a["ladder"].reshape(-1)).tolist()]
    a["conn_bits"] = reach(a["open_bits"], a["join_bits"], seeds)
    return dataclasses.replace(view, **a, goal_revealed=tuple(revealed))


def _sab2_card_played() -> frozenset[int]:
    from saboteur_env.sab2.state import Sab2Event as E

    return frozenset((E.PLACE, E.BREAK, E.REPAIR, E.ROCKFALL, E.MAP, E.THEFT, E.HANDS_OFF, E.SWAP_HAND, E.INSPECTION,
                      E.SWAP_HATS, E.TRAPPED, E.FREE_AT_LAST, E.DISCARD))  # fmt: skip


_SAB2_CARD_PLAYED = _sab2_card_played()


def _duel(view: Any, events: Sequence[Any]) -> Any:
    """The Duel: the public board of the view as an engine state (:meth:`DuelView.public_state`, nothing hidden in
    it), the move's events applied to it, reach recomputed by the engine's own board code and the planes re-encoded."""
    from saboteur_env.duel import board
    from saboteur_env.duel import cards as dc
    from saboteur_env.duel.observation import board_planes
    from saboteur_env.duel.state import DuelEvent as E

    me = int(view.seat)
    ps = view.public_state()
    goal_cells = list(geometry(view.config).goal_cells)
    tools = np.array(view.tools)
    hand = np.array(view.hand)
    hand_sizes = list(view.hand_sizes)
    nuggets = list(view.nuggets)
    ended = False
    for etype, mine, kind, cell, arg in events:
        who = me if mine else 1 - me  # absolute seat of the actor
        off = 0 if mine else 1  # its row in the view's seat-relative arrays
        n = round(arg)
        if etype == E.ROUND_END and not ended:
            ended = True  # score piles (§3.9): every counter on a nugget card scores it for its owner
            for c in np.flatnonzero(ps.cell_counter >= 0).tolist():
                if ps.cell_shape[c] >= 0:
                    nuggets[0 if ps.cell_counter[c] == me else 1] += int(dc.SHAPE_NUGGETS[ps.cell_shape[c]])
        if etype == E.PAY:
            nuggets[off] -= n  # a bribed troll's payment
        if ended:
            continue
        if etype in (E.PLACE, E.BREAK, E.REPAIR, E.ROCKFALL, E.MAP, E.KEY):
            hand_sizes[off] -= 1  # the round ends before the draw
            if mine and etype != E.ROCKFALL and kind >= 0:
                hand[kind] -= 1
            elif mine and etype == E.ROCKFALL:
                hand[dc.KIND_ROCKFALL] -= 1
        elif etype in (E.REPAIR_DISCARD, E.PASS):
            hand_sizes[off] -= 2 if etype == E.REPAIR_DISCARD else n
        if etype == E.PLACE:
            ps.cell_shape[cell] = dc.shape_id(kind, n)
        elif etype == E.REVEAL:
            ps.cell_shape[cell] = dc.shape_id(kind, n)
            ps.goal_revealed[goal_cells.index(cell)] = True
        elif etype == E.ROCKFALL:
            ps.cell_shape[cell] = -1
            if ps.cell_key[cell]:
                ps.cell_key[cell] = False
                ps.keys_left += 1
        elif etype == E.KEY:
            ps.cell_key[cell] = True
            ps.keys_left -= 1
        elif etype in (E.BRIBE, E.SECURE):
            ps.cell_counter[cell] = who
            ps.counters_left -= 1
        elif etype == E.BREAK:
            tools[1 - off, n] = True
        elif etype == E.REPAIR:
            tools[off] &= ~np.array([bool(n >> t & 1) for t in range(3)])
        elif etype == E.REPAIR_DISCARD:
            tools[off, n] = False
    board.refresh_reach(ps)
    planes = board_planes(ps, me).astype(np.asarray(view.planes).dtype)
    return dataclasses.replace(view, planes=planes, tools=tools, hand=hand, hand_sizes=tuple(hand_sizes),
                               nuggets=tuple(nuggets), counters_left=int(ps.counters_left),
                               keys_left=int(ps.keys_left))  # fmt: skip
