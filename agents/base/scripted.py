"""A simple role-aware scripted agent: diggers build towards the gold, saboteurs block and break.

It reads the :class:`saboteur_env.PlayerView` decoded from its observation and scores the legal moves with the
board helpers below; it keeps no memory between decisions.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from saboteur_env import ActionType, GameConfig, PlayerView, action_layout
from saboteur_env.base.cards import SHAPE_ID, SHAPE_SPECS, SHAPES, Role
from saboteur_env.common.geometry import geometry

_STEPS = ((-1, 0), (0, 1), (1, 0), (0, -1))


def target_cells(view: PlayerView) -> list[tuple[int, int]]:
    """Storage cells of the goals worth reaching: the known gold, else every goal not known to be stone."""
    geo = geometry(view.config)
    cells = [divmod(c, view.config.cols) for c in geo.goal_cells]
    gold = [cells[g] for g, k in enumerate(view.goal_knowledge) if k == "gold"]
    if gold:
        return gold
    open_goals = [cells[g] for g, k in enumerate(view.goal_knowledge) if k is None]
    return open_goals or cells


def _distance(cell: tuple[int, int], targets: list[tuple[int, int]]) -> int:
    return min(abs(cell[0] - r) + abs(cell[1] - c) for r, c in targets)


def _free(view: PlayerView, r: int, c: int) -> bool:
    rows, cols = view.empty.shape
    return 0 <= r < rows and 0 <= c < cols and bool(view.empty[r, c] or view.goal_facedown[r, c])


def frontier_distance(view: PlayerView, targets: list[tuple[int, int]]) -> int:
    """Smallest distance to a target from a free cell that a connected arm points at (99 if none)."""
    best = 99
    for r, c in zip(*np.nonzero(view.conn_bits), strict=True):
        bits = int(view.conn_bits[r, c])
        for d, (dr, dc) in enumerate(_STEPS):
            if (bits >> d) & 1 and _free(view, r + dr, c + dc):
                best = min(best, _distance((r + dr, c + dc), targets))
    return best


def placement_frontier(view: PlayerView, kind: int, rotation: int, r: int, c: int) -> list[tuple[int, int]]:
    """Free cells the placed card would extend a connected tunnel to."""
    shape = SHAPES[SHAPE_ID[(kind, rotation)]]
    out = []
    rows, cols = view.conn_bits.shape
    for group in shape.groups:
        connected = False
        for e in group:
            rr, cc = r + _STEPS[e][0], c + _STEPS[e][1]
            if 0 <= rr < rows and 0 <= cc < cols and (int(view.conn_bits[rr, cc]) >> ((e + 2) % 4)) & 1:
                connected = True
        if connected:
            for e in group:
                rr, cc = r + _STEPS[e][0], c + _STEPS[e][1]
                if _free(view, rr, cc):
                    out.append((rr, cc))
    return out


class ScriptedAgent:
    """Role-aware rules of thumb (no beliefs about other players)."""

    name = "scripted"

    def __init__(self, config: GameConfig) -> None:
        self.config = config
        self.layout = action_layout(config)
        self.rng = np.random.default_rng()

    def reset(self, seat: int, num_players: int, seed: int | None) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, observation: NDArray[np.float32], action_mask: NDArray[np.int8]) -> int:
        view = PlayerView.from_observation(observation, self.config)
        legal = [self.layout.decode(int(a)) for a in np.flatnonzero(action_mask)]
        if not legal:
            raise ValueError("act() needs a mask with at least one legal action")
        scores = [self._score(view, act) for act in legal]
        best = max(scores)
        choices = [i for i, s in enumerate(scores) if s == best]
        return self.layout.encode(legal[int(self.rng.choice(choices))])

    # Higher is better; discards score low so that any useful play wins.
    def _score(self, view: PlayerView, act) -> float:
        saboteur = view.role == Role.SABOTEUR
        targets = target_cells(view)
        cols = self.config.cols
        t = act.type
        if t in (ActionType.REPAIR, ActionType.DOUBLE_REPAIR):
            if act.target == 0:
                return 90.0
            return -5.0 if saboteur else 20.0
        if t == ActionType.BREAK:
            if act.target == 0:
                return -100.0
            return 40.0 if saboteur else -50.0
        if t == ActionType.MAP:
            unknown = sum(k is None for k in view.goal_knowledge)
            return 60.0 if "gold" not in view.goal_knowledge and unknown >= 2 else -20.0
        if t == ActionType.ROCKFALL:
            if not saboteur:
                return -30.0
            r, c = divmod(act.cell, cols)
            if not view.conn_bits[r, c]:
                return -10.0
            return 50.0 - _distance((r, c), targets) * 5
        if t == ActionType.PLACE:
            r, c = divmod(act.cell, cols)
            frontier = placement_frontier(view, act.kind, act.rotation, r, c)
            dead_end = SHAPE_SPECS[act.kind].dead_end
            if saboteur:
                if dead_end:
                    return 45.0 - _distance((r, c), targets) * 5
                # Lead tunnels away from the goals.
                return 5.0 + (min(_distance(f, targets) for f in frontier) if frontier else 0.0)
            if dead_end or not frontier:
                return -40.0
            now = frontier_distance(view, targets)
            best = min(_distance(f, targets) for f in frontier)
            return 30.0 + (now - best) * 10 + 0.5 * len(frontier) - best
        # Discard: diggers drop dead ends and sabotage cards first; saboteurs drop good tunnels first.
        spec = SHAPE_SPECS[act.kind] if act.kind < 16 else None
        if saboteur:
            return -60.0 if spec is not None and spec.dead_end else -55.0
        if spec is not None and spec.dead_end:
            return -50.0
        if act.kind in (16, 17, 18, 25):
            return -52.0
        return -60.0
