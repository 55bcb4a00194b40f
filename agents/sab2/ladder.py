"""Saboteur 2 agents, reading only their observation (decoded into a :class:`saboteur_env.sab2.view.Sab2View`).

``Sab2Agent(config, role_aware=True)`` is the role-dispatching heuristic:

* everyone digging (blue / green gold-diggers, Boss, Profiteer; the role-blind ``greedy`` variant always digs):
  the placement that most shortens the tile distance from the connected tunnel to the goals not known to be stone;
  a digger of one colour never lays a door of the other colour, and a geologist prefers crystal cards (each one
  pays it at the round end) over tunnelling;
* saboteurs: the placement that most lengthens that distance (dead ends and turns on the frontier), rockfalls on
  the tunnel card nearest a goal, broken tools and Trapped! on the seat that dug last;
* all roles: repair / free themselves first (a repair card, Free at Last!, or option C with two spare cards), play
  Theft on themselves, and as thieves steal from the richest player; inspect when nothing better is left; pass by
  discarding their least useful card, then stop.

``Sab2Believer`` (``believer``) is the same heuristic reading a :class:`~agents.sab2.beliefs.Sab2RoleBelief` kept
from its views: gold-side diggers repair and free seats they believe are friends (P >= 0.6) before placing, and
break or trap the seat most likely a saboteur (P >= 0.5) when no placement helps; saboteurs break and trap the
seat most likely on the gold side (instead of a random one), maps go only to goals not settled yet, and
inspections to the seat whose side is most uncertain (never one already inspected while it holds that role).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from agents.sab2.beliefs import NUM_ROLES, SIDE, Sab2BeliefTracker, Sab2RoleBelief
from saboteur_env import GameConfig, action_layout
from saboteur_env.common.arms import OPP
from saboteur_env.common.geometry import geometry
from saboteur_env.sab2 import cards as sc
from saboteur_env.sab2.actions import PLACEABLE, SEGMENTS, Sab2ActionLayout
from saboteur_env.sab2.cards import Sab2Role as R
from saboteur_env.sab2.state import Phase
from saboteur_env.sab2.view import Sab2View

INF = 99
DECAY = 0.6
DIGGERS = (R.BLUE_DIGGER, R.GREEN_DIGGER, R.BOSS, R.PROFITEER)


class Sab2Agent:
    """Role-dispatching Saboteur 2 heuristic (``role_aware=False``: the role-blind digger, ``greedy``)."""

    def __init__(self, config: GameConfig, role_aware: bool = True) -> None:
        if config.game != "sab2":
            raise ValueError(f"Sab2Agent plays game='sab2', not {config.game!r}")
        self.config = config
        self.role_aware = role_aware
        self.name = "heuristic" if role_aware else "greedy"
        self.layout: Sab2ActionLayout = action_layout(config)
        self.geo = geometry(config)
        self.rng = np.random.default_rng()

    def reset(self, seat: int, num_players: int, seed: int | None) -> None:
        self.rng = np.random.default_rng(seed)

    def view(self, observation: NDArray[np.float32]) -> Sab2View:
        return Sab2View.from_observation(observation, self.config)

    # ---- board analysis from the view (flat cell indices, as in actions) ----
    def _targets(self, view: Sab2View) -> list[int]:
        """Goal cells worth digging to: the gold if the agent peeked it, else face-down goals not known stone."""
        facedown, peeked_gold, peeked_stone = (a.ravel() for a in (view.goal_facedown, view.peeked_gold,
                                                                   view.peeked_stone))  # fmt: skip
        cells = [c for c in self.geo.goal_cells if facedown[c]]
        gold = [c for c in cells if peeked_gold[c]]
        return gold or [c for c in cells if not peeked_stone[c]]

    def _distance(self, empty: NDArray[np.bool_], goal: int) -> NDArray[np.int64]:
        dist = np.full(self.config.num_cells, INF, dtype=np.int64)
        queue: deque[int] = deque()
        for j in self.geo.nbr_list[goal]:
            if j >= 0 and empty[j]:
                dist[j] = 1
                queue.append(j)
        while queue:
            x = queue.popleft()
            for j in self.geo.nbr_list[x]:
                if j >= 0 and empty[j] and dist[j] == INF:
                    dist[j] = dist[x] + 1
                    queue.append(j)
        return dist

    def _frontier(self, conn: NDArray[np.int64], empty: NDArray[np.bool_]) -> list[int]:
        out = []
        for x in np.flatnonzero(conn).tolist():
            for d, j in enumerate(self.geo.nbr_list[x]):
                if j >= 0 and (conn[x] >> d) & 1 and (empty[j] or self.geo.is_goal_cell[j]):
                    out.append(j)
        return out

    def _score(self, frontier: list[int], maps: dict[int, NDArray[np.int64]]) -> float:
        total = 0.0
        for goal, dist in maps.items():
            best = min((0 if f == goal else int(dist[f]) for f in frontier), default=INF)
            total += DECAY ** min(best, 30)
        return total

    def _placement_value(self, conn_bits: NDArray[np.int64], empty: NDArray[np.bool_],
                         maps: dict[int, NDArray[np.int64]], frontier: list[int], base: float, cell: int,
                         orient: int) -> float:  # fmt: skip
        kind, rot = PLACEABLE[orient]
        sid = 2 * kind + rot
        groups = sc.SHAPE_ARM_GROUP[sid]
        conn = [j >= 0 and bool((conn_bits[j] >> OPP[d]) & 1) for d, j in enumerate(self.geo.nbr_list[cell])]
        reached = 0
        if sc.SHAPE_LADDER[sid]:
            reached = int(sc.SHAPE_OPEN[sid])
        for d in range(4):
            if conn[d] and (int(sc.SHAPE_OPEN[sid]) >> d) & 1:
                reached |= int(groups[d])
        new = list(frontier)
        for d, j in enumerate(self.geo.nbr_list[cell]):
            if j >= 0 and (reached >> d) & 1 and (empty[j] or self.geo.is_goal_cell[j]):
                new.append(j)
        new = [f for f in new if f != cell]
        return self._score(new, maps) - base

    # ---- policy ----
    def act(self, observation: NDArray[np.float32], action_mask: NDArray[np.int8]) -> int:
        legal = np.flatnonzero(action_mask)
        if legal.size == 0:
            raise ValueError("act() needs a mask with at least one legal action")
        view = self.view(observation)
        role = view.role if self.role_aware else R.BLUE_DIGGER
        digging_role = role in DIGGERS or not self.role_aware
        phase = view.phase
        by: dict[str, list[int]] = {}
        for a, g in zip(legal.tolist(), self.layout.segment_of[legal].tolist(), strict=True):
            by.setdefault(SEGMENTS[g], []).append(a)
        hand = view.hand
        if phase == Phase.THEFT:
            return max(by["steal"], key=lambda a: (int(view.gold[self.layout.decode(a).target]), -a))
        if phase in (Phase.PASS, Phase.FREE):
            if "stop" in by:
                return by["stop"][0]
            return self._cheapest(by["discard"], hand, role)
        # 1. Free yourself.
        broken = view.broken[0]
        trapped = bool(view.trapped[0])
        for seg in ("repair", "double_repair", "free_at_last"):
            own = [a for a in by.get(seg, []) if self.layout.decode(a).target == 0]
            if own and (broken.any() or trapped):
                return own[0]
        if by.get("free") and (broken.any() or trapped) and hand.sum() >= 4:
            return by["free"][0]
        # 2. Theft on yourself.
        if by.get("theft"):
            return by["theft"][0]
        helped = self._before_placing(view, by, role)
        if helped is not None:
            return helped
        conn_bits = view.conn_bits.ravel()
        empty = (view.open_bits.ravel() == 0) & ~view.goal_facedown.ravel()
        maps = {g: self._distance(empty, g) for g in self._targets(view)}
        frontier = self._frontier(conn_bits, empty)
        base = self._score(frontier, maps)
        # 3. Placements.
        best, best_value = -1, 0.0
        for a in by.get("place", []):
            act = self.layout.decode(a)
            kind, _ = PLACEABLE[act.orientation]
            value = self._placement_value(conn_bits, empty, maps, frontier, base, act.cell, act.orientation)
            if not digging_role and role == R.SABOTEUR:
                value = -value
            if self.role_aware:
                doors = sc.SHAPE_DOOR[:, 2 * kind]
                if (role == R.BLUE_DIGGER and doors[1].any()) or (role == R.GREEN_DIGGER and doors[0].any()):
                    value -= 1.0  # a door of the other team
                if role == R.GEOLOGIST:
                    value = abs(value) * 0.2 + (0.5 if sc.SHAPE_CRYSTALS[2 * kind] else 0.0)
            value += 1e-6 * self.rng.random()
            if value > best_value:
                best, best_value = a, value
        if best >= 0:
            return int(best)
        hit = self._after_placing(view, by, role)
        if hit is not None:
            return hit
        # 4. Saboteurs: rockfall near a goal, then break / trap the others.
        if role == R.SABOTEUR and self.role_aware:
            rocks = by.get("rockfall", [])
            if rocks and maps:
                nearest = {a: min(int(d[self.layout.decode(a).cell]) for d in maps.values()) for a in rocks}
                return min(rocks, key=lambda a: (nearest[a], a))
            for seg in ("trapped", "break"):
                targets = [a for a in by.get(seg, []) if self.layout.decode(a).target != 0]
                if targets:
                    return self._hit(view, targets, role)
        # 5. Information and the rest.
        for seg in ("map", "inspection"):
            if by.get(seg):
                info = self._information(view, seg, by[seg])
                if info is not None:
                    return info
        if by.get("discard"):
            return self._cheapest(by["discard"], hand, role)
        return int(legal[int(self.rng.integers(legal.size))])

    # ---- hooks (the believer overrides them; these keep the heuristic's behaviour and random draws) ----
    def _before_placing(self, view: Sab2View, by: dict[str, list[int]], role: int) -> int | None:
        return None

    def _after_placing(self, view: Sab2View, by: dict[str, list[int]], role: int) -> int | None:
        return None

    def _hit(self, view: Sab2View, actions: list[int], role: int) -> int:
        return actions[int(self.rng.integers(len(actions)))]

    def _information(self, view: Sab2View, seg: str, actions: list[int]) -> int | None:
        return actions[int(self.rng.integers(len(actions)))]

    def _cheapest(self, discards: list[int], hand: NDArray[np.int64], role: int) -> int:
        """The least useful card to discard: dead ends and doors of the other team first, then spare action cards."""

        def value(a: int) -> float:
            kind = self.layout.decode(a).kind
            if kind < sc.NUM_PATH_KINDS:
                spec = sc.SPECS[kind]
                assert spec is not None  # every path kind has a card spec
                v = 0.5 if not spec.dead_end else 0.1
                if spec.crystals and role == R.GEOLOGIST:
                    v += 1.0
                return v
            return 0.3

        return min(discards, key=lambda a: (value(a), a))


class Sab2Oracle(Sab2Agent):
    """**Cheating** upper bound (never in ratings): the heuristic plus the hidden state read through ``env.state()``
    (bind it with ``bind_state``). ``gold``: digs only towards the true gold goal; ``roles``: also breaks and traps
    the seats of the other side (saboteurs for the digging roles, everyone else for saboteurs)."""

    oracle = True  # declared: the experiments hand the hidden state to declared oracles only (agents.agent)

    def __init__(self, config: GameConfig, knows: str) -> None:
        super().__init__(config, role_aware=True)
        if knows not in ("gold", "roles"):
            raise ValueError(f"knows={knows!r} must be 'gold' or 'roles'")
        self.knows = knows
        self.name = f"{knows}_oracle"
        self._state_fn: Callable[[], NDArray[np.float32]] | None = None
        self._seat = 0

    def bind_state(self, state_fn: Callable[[], NDArray[np.float32]]) -> None:
        self._state_fn = state_fn

    def _hidden(self) -> dict[str, list[int]]:
        if self._state_fn is None:
            raise RuntimeError(f"{type(self).__name__} needs bind_state(env.state) before acting")
        from saboteur_env.sab2.observation import decode_state

        return decode_state(self._state_fn(), self.config)

    def _targets(self, view: Sab2View) -> list[int]:
        hidden = self._hidden()
        for slot, kind in enumerate(hidden["goal_kinds"]):
            if kind == sc.KIND_GOALS[0] and view.goal_facedown[view.cell(self.geo.goal_cells[slot])]:
                return [self.geo.goal_cells[slot]]
        return super()._targets(view)

    def act(self, observation: NDArray[np.float32], action_mask: NDArray[np.int8]) -> int:
        p = self.config.num_players
        in_turn = self.view(observation).phase == Phase.TURN
        if self.knows == "roles" and in_turn:
            roles = self._hidden()["roles"]
            saboteur = roles[self._seat] == R.SABOTEUR
            for a in np.flatnonzero(action_mask).tolist():
                act = self.layout.decode(a)
                if act.segment in ("trapped", "break") and act.target != 0:
                    target = (self._seat + act.target) % p
                    if (roles[target] == R.SABOTEUR) != saboteur:  # the other side
                        return a
        return super().act(observation, action_mask)

    def reset(self, seat: int, num_players: int, seed: int | None) -> None:
        super().reset(seat, num_players, seed)
        self._seat = seat


class Sab2Believer(Sab2Agent):
    """The role-aware heuristic reading its role belief (``believer``; see the module docstring)."""

    def __init__(self, config: GameConfig, friend: float = 0.6, enemy: float = 0.5) -> None:
        super().__init__(config, role_aware=True)
        for label, value in (("friend", friend), ("enemy", enemy)):
            if not 0 <= value <= 1:
                raise ValueError(f"{label}={value} must be a probability in [0, 1]")
        self.name = "believer"
        self.friend, self.enemy = friend, enemy
        self.seat = 0
        self.tracker = Sab2BeliefTracker(config.num_players, 0, config.history_length)

    def reset(self, seat: int, num_players: int, seed: int | None) -> None:
        super().reset(seat, num_players, seed)
        self.seat = seat
        particle_seed = int(np.random.default_rng(seed).integers(2**31))  # from the agent's own seed only
        self.tracker = Sab2BeliefTracker(num_players, seat, self.config.history_length, seed=particle_seed)

    @property
    def belief(self) -> Sab2RoleBelief:
        return self.tracker.belief

    def act(self, observation: NDArray[np.float32], action_mask: NDArray[np.int8]) -> int:
        self.tracker.update(Sab2View.from_observation(observation, self.config, self.seat))
        return super().act(observation, action_mask)

    # ---- who is who, for my role (seat offsets, as in actions) ----
    def _side_of(self, role: int) -> NDArray[np.float64]:
        """(N,) P(seat is my friend) for my role, by offset; geologists and the Profiteer have none."""
        p = np.roll(self.belief.p_role(), -self.seat, axis=0)
        if role == R.SABOTEUR:
            return p[:, R.SABOTEUR]
        if role in (R.BLUE_DIGGER, R.GREEN_DIGGER):
            return p[:, role] + p[:, R.BOSS]
        if role == R.BOSS:
            return p[:, : R.PROFITEER].sum(1)
        return np.zeros(len(p))

    def _enemy_of(self, role: int) -> NDArray[np.float64]:
        p = np.roll(self.belief.p_role(), -self.seat, axis=0)
        if role == R.SABOTEUR:
            return p[:, : R.PROFITEER].sum(1)
        if role in (R.BLUE_DIGGER, R.GREEN_DIGGER, R.BOSS):
            return p[:, R.SABOTEUR]
        return np.zeros(len(p))

    def _before_placing(self, view: Sab2View, by: dict[str, list[int]], role: int) -> int | None:
        if role not in (R.BLUE_DIGGER, R.GREEN_DIGGER, R.BOSS):
            return None  # a saboteur's turn is worth more on the tunnel than on a fellow saboteur's tools
        friend = self._side_of(role)
        options = [a for seg in ("repair", "double_repair", "free_at_last") for a in by.get(seg, [])
                   if self.layout.decode(a).target != 0]  # fmt: skip
        best = max(options, key=lambda a: (friend[self.layout.decode(a).target], -a), default=None)
        if best is not None and friend[self.layout.decode(best).target] >= self.friend:
            return best
        return None

    def _after_placing(self, view: Sab2View, by: dict[str, list[int]], role: int) -> int | None:
        if role not in (R.BLUE_DIGGER, R.GREEN_DIGGER, R.BOSS):
            return None
        enemy = self._enemy_of(role)
        options = [a for seg in ("trapped", "break") for a in by.get(seg, []) if self.layout.decode(a).target != 0]
        best = max(options, key=lambda a: (enemy[self.layout.decode(a).target], -a), default=None)
        if best is not None and enemy[self.layout.decode(best).target] >= self.enemy:
            return best
        return None

    def _hit(self, view: Sab2View, actions: list[int], role: int) -> int:
        enemy = self._enemy_of(role)
        return max(actions, key=lambda a: (enemy[self.layout.decode(a).target], -a))

    def _information(self, view: Sab2View, seg: str, actions: list[int]) -> int | None:
        if seg == "map":
            open_slots = [a for a in actions if view.goal_knowledge[self.layout.decode(a).slot] is None]
            return min(open_slots, default=None)
        p = np.roll(self.belief.p_role(), -self.seat, axis=0)
        sides = np.stack([p[:, SIDE == k].sum(1) for k in range(3)], axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            entropy = -np.nansum(np.where(sides > 0, sides * np.log(sides), 0.0), axis=1)
        fresh = [a for a in actions if not (view.inspected_by_me[self.layout.decode(a).target]
                                            and not view.hats_swapped[self.layout.decode(a).target])]  # fmt: skip
        best = max(fresh, key=lambda a: (entropy[self.layout.decode(a).target], -a), default=None)
        return best if best is not None and entropy[self.layout.decode(best).target] > 0.05 else None


assert NUM_ROLES == len(R)

__all__ = ["Sab2Agent", "Sab2Believer", "Sab2Oracle"]
