"""``expert`` for Saboteur 2: route planning in placements still needed, team-aware play for the expansion roles.

The planner (:func:`arm_costs`) works on *arm states* like the base game's :mod:`agents.base.planner`: state
``4 * cell + e`` is an open tunnel arm on ``cell`` facing direction ``e``. From an arm facing an empty cell one
placement continues through any pair of arms that some placeable card joins in one tunnel and that matches the
cell's maze neighbours (edge matching, §0.4); through a laid card the tunnel continues for free along the card's
own tunnels (so a bridge or a double curve never lets a route turn, §2.5). The search starts at the start card
**and at every ladder card** (ladders are joined to the start, §2.5). It is a vectorised Bellman iteration over
``k`` boards at once, so every legal placement or rockfall is scored exactly on the board after it.

Doors decide who wins (§2.8): a blue gold-digger plans on a graph without the tunnels that carry a green door (and
the other way round), so it never lays the other team's door on its route and routes around the ones in the maze;
the Boss, the saboteurs and everyone else plan on the door-blind graph (any finder ends the round).

:class:`Sab2Expert` (``expert``) keeps :class:`~agents.sab2.ladder.Sab2Believer`'s exact role filter
(:mod:`agents.sab2.beliefs`) and plays, by its current role:

* **gold-diggers and the Boss**: free themselves; finish (a placement that reaches the gold when it is known);
  break or trap a seat believed a saboteur (P >= 0.7) before digging; lay the card with the largest planned gain in
  expected placements to the gold (a small bonus for a door of the own colour on the route: fewer winners share
  more gold, §2.9); repair or free a believed friend (P >= 0.6); break or trap a likely saboteur (P >= 0.5);
  rockfall a card whose removal shortens the route; map only an unsettled goal (never one revealed, peeked or
  settled by two known stones: :func:`~agents.sab2.beliefs.gold_probabilities`); inspect the most uncertain seat;
  discard the least useful card (what no planned route needs, kept: path cards by planned gain, repairs, breaks
  while a suspect exists, maps while the gold is open).
* **saboteurs and the Profiteer** (the Profiteer wins either way but shares the pay with fewer winners when the
  gold is not reached, §2.8-2.9): the placement or rockfall that lengthens the diggers' planned route the most
  (at least 1 placement in expectation, 0.5 once they are within 3; opening a goal counts its chance of being the
  gold), else break or trap the believed gold-side seat who is free to dig and acts soonest, else a smaller block,
  else map an unsettled goal, else discard, keeping dead ends, rockfalls and breaks.
* **geologists**: lay crystal cards (paid per crystal in the maze at the round end, §2.9), else play as blockers
  (a longer round leaves room for more crystals).

Everything is read from the seat's observation (:class:`~saboteur_env.sab2.view.Sab2View`).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from agents.sab2.beliefs import gold_probabilities
from agents.sab2.ladder import Sab2Believer
from saboteur_env import GameConfig
from saboteur_env.common.cards import EDGE_PAIRS
from saboteur_env.common.geometry import Geometry, geometry
from saboteur_env.sab2 import cards as sc
from saboteur_env.sab2.actions import PLACEABLE_SHAPE, SEGMENTS
from saboteur_env.sab2.cards import Sab2Role as R
from saboteur_env.sab2.state import Phase
from saboteur_env.sab2.view import Sab2View

INF = 99
CAP = 12  # distances beyond this count as this (an unreachable goal is not infinitely bad)
OPP = np.array([2, 3, 0, 1])
_BITS4 = (np.arange(16)[:, None] >> np.arange(4)) & 1  # (16, 4)
_CODES = np.arange(256)
ALL_PAIRS = sum(1 << (4 * d + f) for d in range(4) for f in range(4) if d != f)


def pairs_of_groups(groups: NDArray[np.uint8] | list[int]) -> int:
    """Bit ``4 * d + f`` for every pair of distinct arms d, f in one tunnel; ``groups[e]``: arms of e's tunnel."""
    bits = 0
    for d in range(4):
        for f in range(4):
            if d != f and (int(groups[d]) >> f) & 1:
                bits |= 1 << (4 * d + f)
    return bits


def pairs_from_join(join: NDArray[np.int64]) -> NDArray[np.int64]:
    """Arm-pair bits (as :func:`pairs_of_groups`) from the view's 6-bit ``join_bits`` (EDGE_PAIRS order)."""
    out = np.zeros_like(join)
    for i, (a, b) in enumerate(EDGE_PAIRS):
        on = ((join >> i) & 1).astype(bool)
        out |= np.where(on, (1 << (4 * a + b)) | (1 << (4 * b + a)), 0)
    return out


def strip_arms(pairs: NDArray[np.int64], arms: NDArray[np.int64]) -> NDArray[np.int64]:
    """``pairs`` without every pair that uses an arm in ``arms`` (per cell, 4-bit masks)."""
    out = pairs.copy()
    for d in range(4):
        for f in range(4):
            if d != f:
                hit = (((arms >> d) | (arms >> f)) & 1).astype(bool)
                out &= ~np.where(hit, 1 << (4 * d + f), 0)
    return out


def pair_table(orient_open: NDArray[np.int64], orient_pairs: NDArray[np.int64]) -> NDArray[np.int64]:
    """TABLE[cons | req << 4]: arm pairs some orientation joins on an empty cell whose maze neighbours lie in the
    directions ``cons``, those with an open facing edge in ``req`` (edge matching)."""
    cons, req = _CODES & 15, _CODES >> 4
    fits = (orient_open[None, :] & cons[:, None]) == req[:, None]
    return np.bitwise_or.reduce(np.where(fits, orient_pairs[None, :], 0), axis=1)


def arm_costs(geo: Geometry, maze: NDArray[np.bool_], open_: NDArray[np.int64], pairs: NDArray[np.int64],
              blocked: NDArray[np.bool_], table: NDArray[np.int64],
              targets: list[tuple[int, int]]) -> NDArray[np.int64]:  # fmt: skip
    """(k, T, 4 * cells): placements still needed from an arm state to target ``t`` on each of ``k`` boards.

    ``maze`` / ``open_`` / ``pairs``: (k, cells) laid cards, their open arms and joined arm pairs (free passage);
    ``blocked``: cells that take no card (face-down goals); ``table``: :func:`pair_table` of the
    cards that may still be laid; ``targets``: (cell, entry arms) - an arm facing ``cell`` whose opposite arm is in
    the entry mask reaches it (0 placements)."""
    k, hw = maze.shape
    ns = 4 * hw
    nbr = geo.nbr
    valid = nbr >= 0
    nb = np.where(valid, nbr, 0)
    empty = ~maze & ~blocked
    cons = np.zeros((k, hw), dtype=np.int64)
    req = np.zeros((k, hw), dtype=np.int64)
    for d in range(4):
        there = valid[None, :, d] & maze[:, nb[:, d]]
        cons |= there.astype(np.int64) << d
        req |= (there & ((open_[:, nb[:, d]] >> OPP[d]) & 1).astype(bool)).astype(np.int64) << d
    # A face-down goal is a terminal for itself and, for the other targets, passed through at no cost: once turned
    # over (a stone) the route goes on through it (an optimistic guess at its tunnels).
    cell_pairs = np.where(empty, table[cons | req << 4], np.where(maze, pairs, np.where(blocked, ALL_PAIRS, 0)))
    s_cell, s_dir = np.repeat(np.arange(hw), 4), np.tile(np.arange(4), hw)
    n = nbr[s_cell, s_dir]
    ok = n >= 0
    n0 = np.where(ok, n, 0)
    entry = OPP[s_dir]
    base = (np.arange(k) * ns)[:, None]
    sentinel = k * ns
    succ = np.empty((4, k, ns), dtype=np.int64)
    for f in range(4):
        allowed = ok[None, :] & (((cell_pairs[:, n0] >> (4 * entry + f)[None, :]) & 1) == 1)
        succ[f] = np.where(allowed, base + n0 * 4 + f, sentinel)
    succ_flat = succ.reshape(4, k * ns)
    step = np.where(ok[None, :] & empty[:, n0], 1, 0).reshape(-1).astype(np.int16)
    t_count = len(targets)
    out = np.full((t_count, sentinel + 1), INF, dtype=np.int16)
    for t, (cell, mask) in enumerate(targets):
        term = ok & (n0 == cell) & (((mask >> entry) & 1) == 1)
        out[t, :-1][np.tile(term, k)] = 0
    cur = out[:, :-1]
    for _ in range(ns):  # Bellman iteration to the fixpoint (INF + 1 never wins: clipped below)
        nxt = np.minimum(cur, np.minimum(step + np.minimum.reduce(np.take(out, succ_flat, axis=1), axis=1), INF))
        if np.array_equal(nxt, cur):
            break
        cur[:] = nxt
    return cur.reshape(t_count, k, ns).transpose(1, 0, 2).astype(np.int64)


def source_distance(costs: NDArray[np.int64], sources: NDArray[np.bool_]) -> NDArray[np.int64]:
    """(k, T): the fewest placements from any source arm state ((k, 4 * cells) mask)."""
    return np.where(sources[:, None, :], costs, INF).min(axis=2)


def arm_states(bits: NDArray[np.int64]) -> NDArray[np.bool_]:
    """(..., 4 * cells) arm-state mask from per-cell 4-bit arm masks."""
    return _BITS4[bits.astype(np.int64)].reshape(*bits.shape[:-1], -1).astype(bool)


# ---- Saboteur 2 card tables per placeable orientation ----
_SID = PLACEABLE_SHAPE.astype(np.int64)
ORIENT_OPEN = sc.SHAPE_OPEN[_SID].astype(np.int64)
ORIENT_GROUPS = sc.SHAPE_ARM_GROUP[_SID]
ORIENT_BLUE = sc.SHAPE_DOOR[0, _SID].astype(np.int64)
ORIENT_GREEN = sc.SHAPE_DOOR[1, _SID].astype(np.int64)
ORIENT_LADDER = sc.SHAPE_LADDER[_SID]
ORIENT_CRYSTAL = sc.SHAPE_CRYSTALS[_SID] > 0
_ALL_PAIRS = np.array([pairs_of_groups(g) for g in ORIENT_GROUPS], dtype=np.int64)
# Per planning team (0: door-blind, 1: blue - green doors close, 2: green - blue doors close).
ORIENT_PAIRS = np.stack([_ALL_PAIRS, strip_arms(_ALL_PAIRS, ORIENT_GREEN), strip_arms(_ALL_PAIRS, ORIENT_BLUE)])
TABLES = np.stack([pair_table(ORIENT_OPEN, ORIENT_PAIRS[t]) for t in range(3)])
DEAD_END_KIND = np.array([bool(s is not None and getattr(s, "dead_end", False)) for s in sc.SPECS[: sc.NUM_PATH_KINDS]])
TEAM_OF = {R.BLUE_DIGGER: 1, R.GREEN_DIGGER: 2}
GOLD_SIDE = (R.BLUE_DIGGER, R.GREEN_DIGGER, R.BOSS)
BLOCKING = (R.SABOTEUR, R.PROFITEER)


class Sab2Board:
    """One view's maze as planner arrays, and the outcomes of placements and rockfalls on it (exact distances)."""

    def __init__(self, config: GameConfig, view: Sab2View, team: int, weights: NDArray[np.float64]) -> None:
        self.geo = geo = geometry(config)
        self.team = team
        self.weights = weights
        self.open_ = view.open_bits.ravel().astype(np.int64)
        revealed = (view.goal_gold | view.goal_stone).ravel()
        self.maze = view.path.ravel() | view.start.ravel() | revealed
        self.facedown = view.goal_facedown.ravel().copy()
        self.ladder = view.ladder.ravel() | view.start.ravel()
        pairs = pairs_from_join(view.join_bits.ravel().astype(np.int64))
        if team == 1:
            pairs = strip_arms(pairs, view.green_door_bits.ravel().astype(np.int64))
        elif team == 2:
            pairs = strip_arms(pairs, view.blue_door_bits.ravel().astype(np.int64))
        self.pairs = pairs
        self.conn = view.conn_bits.ravel().astype(np.int64)
        self.targets = [(int(c), 15) for c in geo.goal_cells]
        self.active = np.array([bool(self.facedown[c]) for c in geo.goal_cells])
        self.dist = self.distances(self.maze[None], self.open_[None], self.pairs[None], self.ladder[None])[0]
        self.value = float(self.expected(self.dist[None])[0])

    def expected(self, dist: NDArray[np.int64]) -> NDArray[np.float64]:
        """Expected placements to the gold (capped) for rows of (k, 3) distances. A face-down goal reached (distance
        0) ends the round with the chance that it is the gold; otherwise the others are still to reach."""
        d = np.minimum(dist, CAP).astype(np.float64)
        reached = (dist == 0) & self.active
        ends = reached.astype(np.float64) @ self.weights
        others = np.where(self.active & ~reached, self.weights, 0.0)
        mass = others.sum(axis=1)
        cond = np.where(mass > 0, (others * d).sum(axis=1) / np.where(mass > 0, mass, 1.0), 0.0)
        return np.asarray((1.0 - np.minimum(ends, 1.0)) * cond, dtype=np.float64)

    def distances(self, maze: NDArray[np.bool_], open_: NDArray[np.int64], pairs: NDArray[np.int64],
                  ladder: NDArray[np.bool_]) -> NDArray[np.int64]:  # fmt: skip
        k = maze.shape[0]
        blocked = np.broadcast_to(self.facedown, maze.shape)
        costs = arm_costs(self.geo, maze, open_, pairs, blocked, TABLES[self.team], self.targets)
        sources = arm_states(np.where(ladder & maze, open_, 0))
        dist = source_distance(costs, sources)
        dist[:, ~self.active] = INF
        return dist.reshape(k, -1)

    def _copies(self, k: int) -> tuple[NDArray[np.bool_], NDArray[np.int64], NDArray[np.int64], NDArray[np.bool_]]:
        return (np.repeat(self.maze[None], k, axis=0), np.repeat(self.open_[None], k, axis=0),
                np.repeat(self.pairs[None], k, axis=0), np.repeat(self.ladder[None], k, axis=0))  # fmt: skip

    def after_places(self, cells: list[int], orients: list[int]) -> NDArray[np.int64]:
        """(k, 3) distances after laying orientation ``orients[i]`` on ``cells[i]``."""
        k = len(cells)
        if k == 0:
            return np.zeros((0, 3), dtype=np.int64)
        rows, c, o = np.arange(k), np.array(cells), np.array(orients)
        maze, open_, pairs, ladder = self._copies(k)
        maze[rows, c] = True
        open_[rows, c] = ORIENT_OPEN[o]
        pairs[rows, c] = ORIENT_PAIRS[self.team, o]
        ladder[rows, c] = ORIENT_LADDER[o]
        return self.distances(maze, open_, pairs, ladder)

    def after_removals(self, cells: list[int]) -> NDArray[np.int64]:
        """(k, 3) distances after a rockfall on ``cells[i]``."""
        k = len(cells)
        if k == 0:
            return np.zeros((0, 3), dtype=np.int64)
        rows, c = np.arange(k), np.array(cells)
        maze, open_, pairs, ladder = self._copies(k)
        maze[rows, c] = False
        open_[rows, c] = 0
        pairs[rows, c] = 0
        ladder[rows, c] = False
        return self.distances(maze, open_, pairs, ladder)


class Sab2Expert(Sab2Believer):
    """Route-planning, team-aware Saboteur 2 agent (``expert``; see the module docstring)."""

    def __init__(self, config: GameConfig) -> None:
        super().__init__(config)
        self.name = "expert"

    # ---- who is who ----
    def _gold_side(self) -> NDArray[np.float64]:
        p = np.roll(self.belief.p_role(), -self.seat, axis=0)
        return np.asarray(p[:, [int(r) for r in GOLD_SIDE]].sum(1), dtype=np.float64)

    # ---- policy ----
    def act(self, observation: NDArray[np.float32], action_mask: NDArray[np.int8]) -> int:
        legal = np.flatnonzero(action_mask)
        if legal.size == 0:
            raise ValueError("act() needs a mask with at least one legal action")
        view = Sab2View.from_observation(observation, self.config, self.seat)
        self.tracker.update(view)
        by: dict[str, list[int]] = {}
        for a, g in zip(legal.tolist(), self.layout.segment_of[legal].tolist(), strict=True):
            by.setdefault(SEGMENTS[g], []).append(a)
        role = R(int(view.role))
        if view.phase == Phase.THEFT:
            return max(by["steal"], key=lambda a: (int(view.gold[self.layout.decode(a).target]), -a))
        board = self._board(view, role)
        if view.phase in (Phase.PASS, Phase.FREE):
            if "stop" in by:
                return by["stop"][0]
            return self._least_useful(by["discard"], view, role, board)
        own = self._free_myself(view, by)
        if own is not None:
            return own
        if by.get("theft"):
            return by["theft"][0]
        if role in GOLD_SIDE:
            choice = self._dig(view, by, role, board)
        elif role == R.GEOLOGIST:
            crystal = self._crystal(by, board)
            choice = crystal if crystal is not None else self._block(view, by, role, board)
        else:
            choice = self._block(view, by, role, board)
        if choice is not None:
            return choice
        thieves = [a for a in by.get("hands_off", []) if self.layout.decode(a).target != 0]
        if thieves:  # a rival's Theft would take gold from someone, perhaps me: the richest-stealing thief first
            return thieves[0]
        if by.get("discard"):
            return self._least_useful(by["discard"], view, role, board)
        return int(legal[int(self.rng.integers(legal.size))])

    def _board(self, view: Sab2View, role: R) -> Sab2Board:
        return Sab2Board(self.config, view, TEAM_OF.get(role, 0), gold_probabilities(view))

    def _free_myself(self, view: Sab2View, by: dict[str, list[int]]) -> int | None:
        broken, trapped = view.broken[0], bool(view.trapped[0])
        if not (broken.any() or trapped):
            return None
        for seg in ("free_at_last", "double_repair", "repair"):
            own = [a for a in by.get(seg, []) if self.layout.decode(a).target == 0]
            if own:
                both = [a for a in own if seg == "double_repair" and self.layout.decode(a).tool == 2]
                return (both or own)[0]
        if by.get("free") and view.hand.sum() >= 4:
            return by["free"][0]
        return None

    def _placements(self, by: dict[str, list[int]], board: Sab2Board) -> tuple[list[int], NDArray[np.int64]]:
        acts = by.get("place", [])
        decoded = [self.layout.decode(a) for a in acts]
        dist = board.after_places([d.cell for d in decoded], [d.orientation for d in decoded])
        return acts, dist

    def _dig(self, view: Sab2View, by: dict[str, list[int]], role: R, board: Sab2Board) -> int | None:
        acts, dist = self._placements(by, board)
        gain = board.value - board.expected(dist) if acts else np.zeros(0)
        own_door = ORIENT_BLUE if role == R.BLUE_DIGGER else ORIENT_GREEN if role == R.GREEN_DIGGER else None
        if acts:
            orients = np.array([self.layout.decode(a).orientation for a in acts])
            if own_door is not None:
                gain = gain + np.where((own_door[orients] > 0) & (gain >= 0), 0.3, 0.0)
            gain = gain + 1e-6 * self.rng.random(len(acts))
            gold = [i for i, g in enumerate(board.weights) if g == 1.0 and board.active[i]]
            for i in np.argsort(-gain).tolist():
                if gold and dist[i, gold[0]] == 0:
                    return acts[i]  # finish
        enemy = self._enemy_of(role)
        hit = self._hit_enemy(by, enemy, 0.7)
        if hit is not None:
            return hit
        best = int(np.argmax(gain)) if acts else -1
        if best >= 0 and gain[best] >= 1.0:
            return acts[best]
        helped = self._before_placing(view, by, role)  # repair / free a believed friend (P >= 0.6)
        if helped is not None:
            return helped
        hit = self._hit_enemy(by, enemy, 0.5)
        if hit is not None:
            return hit
        if best >= 0 and gain[best] > 0.05:
            return acts[best]
        clear = self._rockfall(by, board, lengthen=False)
        if clear is not None:
            return clear
        return self._inform(view, by, board)

    def _hit_enemy(self, by: dict[str, list[int]], enemy: NDArray[np.float64], threshold: float) -> int | None:
        options = [a for seg in ("trapped", "break") for a in by.get(seg, []) if self.layout.decode(a).target != 0]
        if not options:
            return None
        n = len(enemy)

        def key(a: int) -> tuple[float, float, int]:
            t = self.layout.decode(a).target
            return (enemy[t], -(t / n), -a)  # the likeliest enemy, then who acts soonest

        best = max(options, key=key)
        return best if enemy[self.layout.decode(best).target] >= threshold else None

    def _rockfall(self, by: dict[str, list[int]], board: Sab2Board, lengthen: bool) -> int | None:
        rocks = by.get("rockfall", [])
        if not rocks:
            return None
        cells = [self.layout.decode(a).cell for a in rocks]
        after = board.expected(board.after_removals(cells))
        change = after - board.value if lengthen else board.value - after
        i = int(np.argmax(change + 1e-6 * self.rng.random(len(rocks))))
        need = 1.0 if lengthen else 0.5
        return rocks[i] if change[i] >= need else None

    def _inform(self, view: Sab2View, by: dict[str, list[int]], board: Sab2Board) -> int | None:
        maps = [a for a in by.get("map", []) if self._unsettled(view, self.layout.decode(a).slot)]
        if maps:  # the unsettled goal nearest the tunnel
            return min(maps, key=lambda a: (int(board.dist[self.layout.decode(a).slot]), a))
        if by.get("inspection"):
            return self._information(view, "inspection", by["inspection"])
        return None

    @staticmethod
    def _unsettled(view: Sab2View, slot: int) -> bool:
        """Whether mapping goal ``slot`` can tell the seat anything (not revealed, peeked, or implied)."""
        p = gold_probabilities(view)
        return view.goal_knowledge[slot] is None and not view.goal_revealed[slot] and 0.0 < p[slot] < 1.0

    def _crystal(self, by: dict[str, list[int]], board: Sab2Board) -> int | None:
        acts, dist = self._placements(by, board)
        crystal = [i for i, a in enumerate(acts) if ORIENT_CRYSTAL[self.layout.decode(a).orientation]]
        if not crystal:
            return None
        longer = board.expected(dist[crystal]) - board.value  # the crystal card that helps the diggers least
        return acts[crystal[int(np.argmax(longer + 1e-6 * self.rng.random(len(crystal))))]]

    def _block(self, view: Sab2View, by: dict[str, list[int]], role: R, board: Sab2Board) -> int | None:
        close = board.value <= 3.0
        acts, dist = self._placements(by, board)
        best_place, place_gain = -1, 0.0
        if acts:
            harm = board.expected(dist) - board.value + 1e-6 * self.rng.random(len(acts))
            best_place, place_gain = acts[int(np.argmax(harm))], float(harm.max())
        rocks = by.get("rockfall", [])
        best_rock, rock_gain = -1, 0.0
        if rocks:
            after = board.expected(board.after_removals([self.layout.decode(a).cell for a in rocks]))
            harm = after - board.value + 1e-6 * self.rng.random(len(rocks))
            best_rock, rock_gain = rocks[int(np.argmax(harm))], float(harm.max())
        need = 0.5 if close else 1.0
        if max(place_gain, rock_gain) >= need:
            return best_place if place_gain >= rock_gain else best_rock
        if role == R.SABOTEUR or close:
            hit = self._hit_digger(view, by)
            if hit is not None:
                return hit
        if max(place_gain, rock_gain) >= 0.5:
            return best_place if place_gain >= rock_gain else best_rock
        maps = [a for a in by.get("map", []) if self._unsettled(view, self.layout.decode(a).slot)]
        if maps:  # knowing the gold tells where blocking pays
            return min(maps, key=lambda a: (int(board.dist[self.layout.decode(a).slot]), a))
        return None

    def _hit_digger(self, view: Sab2View, by: dict[str, list[int]]) -> int | None:
        """Break or trap the believed gold-side seat who is free to dig and acts soonest."""
        side = self._gold_side()
        options = [a for seg in ("trapped", "break") for a in by.get(seg, []) if self.layout.decode(a).target != 0]
        n = len(side)

        def key(a: int) -> tuple[float, float, int]:
            t = self.layout.decode(a).target
            free = not (view.broken[t].any() or view.trapped[t])
            return (side[t] + (0.5 if free else 0.0), -(t / n), -a)

        options = [a for a in options if side[self.layout.decode(a).target] >= 0.4]
        return max(options, key=key) if options else None

    # ---- discards ----
    def _least_useful(self, discards: list[int], view: Sab2View, role: R, board: Sab2Board) -> int:
        values = self._card_values(view, role, board)
        return min(discards, key=lambda a: (values.get(self.layout.decode(a).kind, 0.0), a))

    def _card_values(self, view: Sab2View, role: R, board: Sab2Board) -> dict[int, float]:
        """How much the seat wants to keep each card kind in its hand (higher: keep)."""
        hand = view.hand
        digger = role in GOLD_SIDE
        geologist = role == R.GEOLOGIST
        values: dict[int, float] = {}
        kinds = [k for k in np.flatnonzero(hand).tolist() if k < sc.NUM_PATH_KINDS]
        for k in kinds:  # a path card: its best planned effect anywhere it fits edge matching on the board now
            orients = [o for o in range(len(_SID)) if int(_SID[o]) // 2 == k]
            cells, os = self._fits(board, orients)
            dist = board.after_places(cells, os)
            change = (board.value - board.expected(dist)) if cells else np.zeros(1)
            if digger:
                v = 0.3 + float(max(change.max(), 0.0)) - (0.25 if DEAD_END_KIND[k] else 0.0)
                if (role == R.BLUE_DIGGER and ORIENT_GREEN[orients].any()) or (
                    role == R.GREEN_DIGGER and ORIENT_BLUE[orients].any()
                ):
                    v -= 0.3
            else:
                v = 0.3 + float(max(-change.min(), 0.0)) + (0.3 if DEAD_END_KIND[k] else 0.0)
            if geologist and ORIENT_CRYSTAL[orients].any():
                v += 2.0
            values[k] = v
        broken, trapped = view.broken[0].any(), bool(view.trapped[0])
        suspect = float(self._enemy_of(role).max()) if digger else 1.0
        gold_open = bool(np.count_nonzero(gold_probabilities(view)) > 1)
        b, e = sc.FIRST_BASE_ACTION, sc.FIRST_EXPANSION_ACTION
        x = sc.ExpansionAction
        for k in range(b, b + 3):
            values[k] = 0.6 if suspect >= 0.4 else 0.25
        for k in range(b + 3, b + 9):
            values[k] = 0.9 if broken else 0.5
        values[b + 9] = values[e + int(x.ROCKFALL)] = 0.7 if not digger else 0.35
        values[b + 10] = 0.45 if gold_open else 0.0
        values[e + int(x.THEFT)] = 1.0
        values[e + int(x.HANDS_OFF)] = 0.2
        values[e + int(x.SWAP_HAND)] = 0.1
        values[e + int(x.INSPECTION)] = 0.2
        values[e + int(x.SWAP_HATS)] = 0.15
        values[e + int(x.TRAPPED)] = 0.6 if suspect >= 0.4 else 0.3
        values[e + int(x.FREE_AT_LAST)] = 0.9 if trapped else 0.45
        return values

    def _fits(self, board: Sab2Board, orients: list[int]) -> tuple[list[int], list[int]]:
        """Cells and orientations where these orientations meet edge matching next to a connected arm."""
        geo = board.geo
        cells, os = [], []
        empty = ~board.maze & ~board.facedown
        for c in np.flatnonzero(empty).tolist():
            touch = False
            cons = req = 0
            for d, j in enumerate(geo.nbr[c].tolist()):
                if j >= 0 and board.maze[j]:
                    cons |= 1 << d
                    if (board.open_[j] >> OPP[d]) & 1:
                        req |= 1 << d
                        touch = touch or bool((board.conn[j] >> OPP[d]) & 1)
            if not touch:
                continue
            for o in orients:
                if (int(ORIENT_OPEN[o]) & cons) == req and (int(ORIENT_OPEN[o]) & req):
                    cells.append(c)
                    os.append(o)
        return cells, os


def bench(num_players: int, games: int = 4, base: str = "heuristic", seed: int = 0,
          secret: int | None = None) -> dict:  # fmt: skip
    """Seconds per decision of ``expert`` and of ``base`` in ``games`` seeded Saboteur 2 games (``expert`` on seat
    ``g % N`` of game ``g``, ``base`` elsewhere; wall-clock of ``act`` only). Agents' seeds are sealed: from
    ``secret`` (default this process's session secret, ``saboteur_env.common.seeding``) and the game, never from
    the deal seed."""
    import time

    from agents.registry import make_agent
    from saboteur_env import raw_env
    from saboteur_env.common.seeding import seat_seeds

    env = raw_env(game="sab2", num_players=num_players)
    spent: dict[str, list[float]] = {"expert": [], base: []}
    for g in range(games):
        env.reset(seed=seed + g)
        names = [base] * num_players
        names[(seed + g) % num_players] = "expert"
        agents = [make_agent(n, env.config) for n in names]
        key = ("bench", *names, seed + g)
        for i, (a, agent_seed) in enumerate(zip(agents, seat_seeds(num_players, key, secret), strict=True)):
            a.reset(i, num_players, agent_seed)
        for agent_id in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            seat = env.possible_agents.index(agent_id)
            start = time.perf_counter()
            action = agents[seat].act(obs["observation"], obs["action_mask"])
            spent[names[seat]].append(time.perf_counter() - start)
            env.step(action)
    return {"players": num_players, "games": games, **{f"{n}_ms": round(1e3 * float(np.mean(t)), 2)
                                                       for n, t in spent.items()},
            **{f"{n}_decisions": len(t) for n, t in spent.items()}}  # fmt: skip


__all__ = [
    "CAP",
    "INF",
    "Sab2Board",
    "Sab2Expert",
    "arm_costs",
    "arm_states",
    "bench",
    "pair_table",
    "pairs_from_join",
    "pairs_of_groups",
    "source_distance",
    "strip_arms",
]  # fmt: skip
