"""A greedy heuristic for Saboteur: The Duel, reading only its :class:`~saboteur_env.duel.view.DuelView`.

Targets are the face-down goals (worth the nuggets of a goal the agent peeked at, else the mean of the goals it
has not seen) and unsecured gold on the board. A BFS through empty cells gives the tiles still needed to reach
each target's access cells; a position is worth ``sum(value * 0.6 ** tiles)`` over the targets, counted from the
agent's own frontier. Each turn, in order: repair a broken tool (a repair card, else two spare cards); block an
opponent who is closer to gold than the agent (a broken tool, else a rockfall on its tunnel nearest the gold);
play the placement with the best gain (a gold card or goal reached now counts its nuggets; trolls are bribed with
their placement when a counter is left); open a door closed to the agent next to its tunnel with a key; bribe a
troll next to its tunnel; break a tool; peek at an unseen goal; otherwise pass, discarding the least useful card.

``DuelBeliever`` (``believer``) is the same policy reading a :class:`~agents.duel.beliefs.DuelBelief`: a face-down
goal is worth its expected nuggets under the goal-pool posterior (goals revealed this round or in earlier rounds are
out), a break goes to the tool the opponent is least likely to be able to repair (its hand as a distribution over
the unseen cards), and a map to the unknown goal nearest its tunnel.
"""

from __future__ import annotations

from collections import deque
from math import comb

import numpy as np
from numpy.typing import NDArray

from agents.duel.beliefs import DuelBelief
from saboteur_env import GameConfig
from saboteur_env.duel import board
from saboteur_env.duel import cards as dc
from saboteur_env.duel.actions import DOUBLE_TOOLS, PAIRS, SEGMENTS, duel_action_layout
from saboteur_env.duel.view import DuelView

DECAY = 0.6
INF = 99


class DuelGreedyAgent:
    """Races to gold, secures nuggets, uses keys and doors of its colour, blocks with breaks and rockfalls."""

    name = "greedy"

    def __init__(self, config: GameConfig) -> None:
        if config.game != "duel":
            raise ValueError(f"DuelGreedyAgent plays game='duel', not {config.game!r}")
        self.config = config
        self.layout = duel_action_layout(config)
        self.geo = board.geometry(config)
        self.rng = np.random.default_rng()

    def reset(self, seat: int, num_players: int, seed: int | None) -> None:
        self.rng = np.random.default_rng(seed)

    # ---- analysis ----
    def _targets(self, view: DuelView, s) -> list[tuple[float, NDArray[np.int64], int]]:
        """(value, distance map over cells, target cell) for every face-down goal and unsecured gold item."""
        values = self._slot_values(view)
        out = []
        for slot, cell in enumerate(self.geo.goal_cells):
            if s.goal_revealed[slot]:
                continue
            value = values[slot]
            if value > 0:
                out.append((value, self._distance(s, [j for j in self.geo.nbr_list[cell] if j >= 0]), cell))
        for cell in board.gold_items(s).tolist():
            if (s.reach[view.seat][cell] & dc.SHAPE_GOLD_BITS[s.cell_shape[cell]]) != 0:
                continue
            gold = int(dc.SHAPE_GOLD_BITS[s.cell_shape[cell]])
            access = [j for d, j in enumerate(self.geo.nbr_list[cell]) if j >= 0 and (gold >> d) & 1]
            out.append((float(dc.SHAPE_NUGGETS[s.cell_shape[cell]]), self._distance(s, access), cell))
        return out

    def _distance(self, s, access: list[int]) -> NDArray[np.int64]:
        """Tiles to place to reach one of ``access`` once the tunnel arrives at a cell (that cell counted)."""
        free = (s.cell_shape < 0) & ~self.geo.is_goal_cell
        dist = np.full(self.config.num_cells, INF, dtype=np.int64)
        queue: deque[int] = deque()
        for j in access:
            if free[j]:
                dist[j] = 1
                queue.append(j)
        while queue:
            x = queue.popleft()
            for j in self.geo.nbr_list[x]:
                if j >= 0 and free[j] and dist[j] == INF:
                    dist[j] = dist[x] + 1
                    queue.append(j)
        return dist

    def _frontier_best(self, s, seat: int, targets) -> list[int]:
        """Per target: the fewest tiles from ``seat``'s tunnel (arms it reaches facing empty cells)."""
        best = [INF] * len(targets)
        reach = s.reach[seat]
        for x in np.flatnonzero(reach).tolist():
            bits = int(reach[x])
            for d, j in enumerate(self.geo.nbr_list[x]):
                if j < 0 or not (bits >> d) & 1 or s.cell_shape[j] >= 0:
                    continue
                for t, (_, dist, cell) in enumerate(targets):
                    best[t] = min(best[t], 0 if j == cell else int(dist[j]))
        return best

    @staticmethod
    def _worth(targets, best: list[int]) -> float:
        return sum(v * DECAY ** b for (v, _, _), b in zip(targets, best, strict=True) if b < INF)

    def _placement_gain(self, s, seat: int, cell: int, orient: int, bribed: bool, targets, best) -> float:
        kind, rot = dc.PLACEABLE[orient]
        sid = dc.shape_id(kind, rot)
        shape = dc.SHAPES[sid]
        if shape.troll and not bribed:
            return -0.1  # blocks both until someone pays a counter
        closed = shape.door_bits[1 - seat]
        usable = shape.open_bits & ~closed
        reached = 0
        if shape.ladder == seat:
            reached = usable
        for d, j in enumerate(self.geo.nbr_list[cell]):
            if j >= 0 and (usable >> d) & 1 and s.cell_shape[j] >= 0 and (s.reach[seat][j] >> board.OPP[d]) & 1:
                reached |= shape.arm_group[d] & usable
        gain = float(shape.nuggets) if reached & shape.gold_bits else 0.0
        new = list(best)
        for d, j in enumerate(self.geo.nbr_list[cell]):
            if j < 0 or not (reached >> d) & 1:
                continue
            for t, (_, dist, tcell) in enumerate(targets):
                if j == tcell:
                    new[t] = 0
                elif s.cell_shape[j] < 0:
                    new[t] = min(new[t], int(dist[j]))
        # A goal reached now is worth its value; otherwise the tunnel's progress towards the targets.
        return gain + self._worth(targets, new) - self._worth(targets, best) - (0.05 if bribed else 0.0)

    # ---- policy ----
    def act(self, observation: NDArray[np.float32], action_mask: NDArray[np.int8]) -> int:
        view = DuelView.from_observation(observation, self.config)
        return self.act_view(view, action_mask)

    def act_view(self, view: DuelView, action_mask: NDArray[np.int8]) -> int:
        legal = np.flatnonzero(action_mask)
        if legal.size == 0:
            raise ValueError("act() needs a mask with at least one legal action")
        layout = self.layout
        by_segment: dict[str, list[int]] = {}
        segs = layout.segment_of[legal]
        for a, g in zip(legal.tolist(), segs.tolist(), strict=True):
            by_segment.setdefault(SEGMENTS[g], []).append(a)
        s = view.public_state()
        me, opp = view.seat, 1 - view.seat
        targets = self._targets(view, s)
        mine = self._frontier_best(s, me, targets)
        theirs = self._frontier_best(s, opp, targets)

        def pick(actions: list[int]) -> int:
            return int(actions[self.rng.integers(len(actions))])

        # 1. Repair.
        if view.tools[0].any():
            for seg in ("repair", "double_repair"):
                if seg in by_segment:
                    both = [a for a in by_segment[seg] if layout.decode(a).choice == 2]
                    return pick(both or by_segment[seg])
            if "repair_discard" in by_segment:
                return self._cheapest_discard(view, s, by_segment["repair_discard"], targets, mine)
        # 2. Block an opponent closer to gold.
        their_best, my_best = min(theirs, default=INF), min(mine, default=INF)
        if their_best <= 2 and their_best < my_best:
            if "break" in by_segment:
                return self._pick_break(view, by_segment["break"])
            if "rockfall" in by_segment:
                return self._best_rockfall(s, opp, by_segment["rockfall"], targets)
        # 3. Best placement.
        best_a, best_gain = -1, 0.0
        for seg in ("place", "place_bribe"):
            for a in by_segment.get(seg, []):
                act = layout.decode(a)
                g = self._placement_gain(s, me, act.cell, act.orientation, seg == "place_bribe", targets, mine)
                g += 1e-6 * self.rng.random()
                if g > best_gain:
                    best_a, best_gain = a, g
        if best_a >= 0:
            return int(best_a)
        # 4. Keys on doors closed to me next to my tunnel; 5. bribes next to my tunnel.
        for seg in ("key", "bribe"):
            useful = [a for a in by_segment.get(seg, []) if self._touches_me(s, me, layout.decode(a).cell)]
            if useful and (seg == "key" or view.counters_left > 2):
                return pick(useful)
        # 6. Break; 7. peek at an unseen goal.
        if "break" in by_segment:
            return self._pick_break(view, by_segment["break"])
        maps = [a for a in by_segment.get("map", []) if view.my_peeks[layout.decode(a).slot] < 0]
        if maps:
            return self._pick_map(view, s, maps)
        # 8. Pass with the least useful card (or anything legal left).
        if "pass" in by_segment:
            singles = [a for a in by_segment["pass"] if layout.decode(a).kind >= 0]
            if singles:
                return self._cheapest_discard(view, s, singles, targets, mine)
        return pick(legal.tolist())

    # ---- hooks (the believer overrides them; these keep the greedy agent's values and random draws) ----
    def _slot_values(self, view: DuelView) -> list[float]:
        """Nuggets a face-down goal slot is worth: a peeked goal's own, else the mean of the goals not peeked."""
        seen = {int(g) for g in view.my_peeks if g >= 0}
        unseen = [g for g in range(dc.NUM_GOALS) if g not in seen]
        mean = float(np.mean(dc.GOAL_NUGGETS[unseen])) if unseen else 0.0
        return [float(dc.GOAL_NUGGETS[int(g)]) if g >= 0 else mean for g in view.my_peeks]

    def _pick_break(self, view: DuelView, actions: list[int]) -> int:
        return int(actions[self.rng.integers(len(actions))])

    def _pick_map(self, view: DuelView, s, actions: list[int]) -> int:
        return int(actions[self.rng.integers(len(actions))])

    def _touches_me(self, s, me: int, cell: int) -> bool:
        """True when ``cell`` is next to an arm ``me`` reaches (or holds arms ``me`` reaches)."""
        if s.reach[me][cell]:
            return True
        for d, j in enumerate(self.geo.nbr_list[cell]):
            if j >= 0 and (s.reach[me][j] >> board.OPP[d]) & 1:
                return True
        return False

    def _best_rockfall(self, s, opp: int, actions: list[int], targets) -> int:
        """Rockfall the opponent's card nearest a target (cards the agent itself uses are spared)."""
        best, score = actions[0], -1.0
        for a in actions:
            cell = self.layout.decode(a).cell
            if s.reach[1 - opp][cell]:
                continue
            near = min((int(dist[cell]) for _, dist, _ in targets), default=INF)
            value = (1.0 if s.reach[opp][cell] else 0.1) * DECAY ** min(near, 20)
            if value > score:
                best, score = a, value
        return int(best)

    def _card_value(self, view: DuelView, s, kind: int, targets, mine) -> float:
        if kind < dc.NUM_PATH_KINDS:
            best = 0.0
            orients = [o for o, (k, _) in enumerate(dc.PLACEABLE) if k == kind]
            table = board.placement_table(s, view.seat)
            for o in orients:
                for cell in np.flatnonzero(table[:, o]).tolist():
                    best = max(best, self._placement_gain(s, view.seat, cell, o, False, targets, mine))
            return best + 0.05
        if kind in dc.KIND_REPAIR or kind in dc.KIND_DOUBLE_REPAIR:
            return 0.6 if view.tools[0].any() else 0.3
        return {dc.KIND_ROCKFALL: 0.25, dc.KIND_MAP: 0.2, dc.KIND_KEY: 0.2}.get(kind, 0.4)  # breaks: 0.4

    def _cheapest_discard(self, view: DuelView, s, actions: list[int], targets, mine) -> int:
        values = {}
        for k in np.flatnonzero(view.hand).tolist():
            values[k] = self._card_value(view, s, k, targets, mine)
        best, cost = actions[0], float("inf")
        for a in actions:
            act = self.layout.decode(a)
            kinds = [act.kind] if act.kind >= 0 else list(PAIRS[act.pair])
            c = sum(values.get(k, 0.0) for k in kinds)
            if c < cost:
                best, cost = a, c
        return int(best)


class DuelBeliever(DuelGreedyAgent):
    """The greedy policy reading its goal and hand beliefs (``believer``; see the module docstring)."""

    name = "believer"

    def __init__(self, config: GameConfig) -> None:
        super().__init__(config)
        self.belief = DuelBelief(config, 0)

    def reset(self, seat: int, num_players: int, seed: int | None) -> None:
        super().reset(seat, num_players, seed)
        self.belief = DuelBelief(self.config, seat)

    def act_view(self, view: DuelView, action_mask: NDArray[np.int8]) -> int:
        if view.seat != self.belief.seat:
            self.belief = DuelBelief(self.config, view.seat)
        self.belief.update(view)
        action = super().act_view(view, action_mask)
        self.belief.note_action(action)
        return action

    def played_instead(self, chosen: int, played: int) -> None:
        """My seat played ``played``, not ``chosen`` (DAgger's student): the noted own action is corrected."""
        self.belief.note_action(chosen, -1)
        self.belief.note_action(played)

    def _slot_values(self, view: DuelView) -> list[float]:
        return self.belief.expected_nuggets().tolist()

    def _pick_break(self, view: DuelView, actions: list[int]) -> int:
        """The tool the opponent is least likely to hold a repair for (a single or a double repair)."""
        unseen, h = self.belief.unseen, self.belief.opp_hand
        total = int(unseen.sum())

        def can_repair(tool: int) -> float:
            kinds = [dc.KIND_REPAIR[tool]] + [k for k, pair in zip(dc.KIND_DOUBLE_REPAIR, DOUBLE_TOOLS, strict=True)
                                              if tool in pair]  # fmt: skip
            u = int(unseen[kinds].sum())
            hand = min(h, total)
            return 1.0 - comb(total - u, hand) / comb(total, hand) if total else 0.0

        return min(actions, key=lambda a: (can_repair(self.layout.decode(a).tool), a))

    def _pick_map(self, view: DuelView, s, actions: list[int]) -> int:
        """The unknown goal nearest the seat's own tunnel."""

        def tiles(a: int) -> int:
            cell = self.geo.goal_cells[self.layout.decode(a).slot]
            dist = self._distance(s, [j for j in self.geo.nbr_list[cell] if j >= 0])
            return self._frontier_best(s, view.seat, [(1.0, dist, cell)])[0]

        return min(actions, key=lambda a: (tiles(a), a))
