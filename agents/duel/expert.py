"""``expert`` for Saboteur: The Duel: a two-sided route race planned in placements still needed.

Each side's distances come from the arm-state planner of :mod:`agents.sab2.expert` (:func:`arm_costs`) on the
Duel's board as that side may use it (§3.5): arms carrying a door of the other colour without a key and every arm
of an unbribed troll are closed, edge matching holds for the cards still to be laid (never an unbribed troll, never
a door closed to the side), the search starts at the side's own start card and its colour's ladder cards, and it
passes freely through cards already laid (the two networks share each other's cards, §3.5). Targets are the
face-down goals, worth their expected nuggets under the goal-pool posterior of :class:`~agents.duel.beliefs.
DuelBelief` (peeks and reveals settled, goals gone in earlier rounds out), and the unsecured gold in the maze
(reached through an arm of its gold tunnel that the side may pass, §3.7).

A side's prospects are ``sum(value * 0.6 ** placements)`` over the targets; a target the acting side reaches at
once (distance 0) is its own (it secures first, §3.7) and leaves the opponent's sum. Every move that changes the
maze - placements (a troll only when bribed at once), rockfalls, keys, bribes - is scored exactly on the board
after it by *my prospects gained minus the opponent's*: that one number makes the agent race to the best gold,
finish and secure when it can, and block the opponent's best route (a rockfall or a dead end across it, a troll
left unbribed on it) when that is worth more than its own progress.

:class:`DuelExpert`, in order: repair (as ``greedy``); the best maze move when it gains at least 0.15; break a tool
of an opponent who threatens gold (its best target within 3 placements), choosing the tool it is least likely able
to repair; map the unsettled goal nearest its tunnel (never one peeked, revealed
or already decided by the pool); the best maze move if positive; break anyway; pass, discarding the least useful card.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from agents.duel.ladder import DuelBeliever
from agents.sab2.expert import INF, arm_costs, arm_states, pair_table, pairs_of_groups, source_distance, strip_arms
from saboteur_env import GameConfig
from saboteur_env.duel import board as db
from saboteur_env.duel import cards as dc
from saboteur_env.duel.actions import SEGMENTS
from saboteur_env.duel.view import DuelView

DECAY = 0.6
NEXT = 0.8  # chance that a side to move with a target one placement away takes it (it needs a fitting card)
SHAPE_PAIRS = np.array([pairs_of_groups(g) for g in dc.SHAPE_ARM_GROUP], dtype=np.int64)
_P_SID = dc.PLACEABLE_SHAPE.astype(np.int64)
_P_OPEN = dc.SHAPE_OPEN[_P_SID].astype(np.int64)
_P_USABLE = ~dc.SHAPE_TROLL[_P_SID]  # a troll still to be laid is planned as closed


def _tables() -> list[NDArray[np.int64]]:
    """Per side: pairs the cards still to be laid can join on an empty cell (doors closed to the side stripped)."""
    out = []
    for p in (0, 1):
        pairs = strip_arms(SHAPE_PAIRS[_P_SID], dc.SHAPE_DOOR[1 - p][_P_SID].astype(np.int64))
        out.append(pair_table(_P_OPEN, np.where(_P_USABLE, pairs, 0)))
    return out


TABLES = _tables()
MAZE_SEGMENTS = ("place", "place_bribe", "rockfall", "key", "bribe")


class DuelBoards:
    """Candidate boards (shape ids, keys, counters) and both sides' distances to the targets on them."""

    def __init__(self, config: GameConfig, s, values: NDArray[np.float64]) -> None:
        self.config = config
        self.geo = geo = db.geometry(config)
        self.shape = s.cell_shape.astype(np.int64)
        self.key = s.cell_key.astype(bool)
        self.counter = s.cell_counter.astype(np.int64)
        facedown = np.zeros(config.num_cells, dtype=bool)
        self.targets: list[tuple[int, int]] = []
        self.values: list[float] = []
        self.gold_cells: list[int] = []
        for slot, cell in enumerate(geo.goal_cells):
            if not s.goal_revealed[slot]:
                facedown[cell] = True
                if values[slot] > 0:
                    self.targets.append((int(cell), 15))
                    self.values.append(float(values[slot]))
        for cell in db.gold_items(s).tolist():
            sid = int(s.cell_shape[cell])
            self.targets.append((int(cell), int(dc.SHAPE_GOLD_BITS[sid])))
            self.values.append(float(dc.SHAPE_NUGGETS[sid]))
            self.gold_cells.append(int(cell))
        self.facedown = facedown
        self.v = np.array(self.values, dtype=np.float64)

    def distances(self, shape: NDArray[np.int64], key: NDArray[np.bool_], counter: NDArray[np.int64],
                  player: int) -> NDArray[np.int64]:  # fmt: skip
        """(k, T) placements ``player`` still needs to each target on ``k`` boards."""
        k = shape.shape[0]
        if not self.targets:
            return np.zeros((k, 0), dtype=np.int64)
        maze = shape >= 0
        sid = np.maximum(shape, 0)
        open_ = np.where(maze, dc.SHAPE_OPEN[sid], 0).astype(np.int64)
        troll = dc.SHAPE_TROLL[sid] & (counter < 0)
        door = np.where(key, 0, dc.SHAPE_DOOR[1 - player][sid]).astype(np.int64)
        closed = np.where(troll, 15, door)
        closed = np.where(maze, closed, 0)
        pairs = strip_arms(np.where(maze, SHAPE_PAIRS[sid], 0), closed)
        blocked = np.broadcast_to(self.facedown, maze.shape)
        # The targets' entry arms must be open to the player (a gold tunnel behind a closed door is not reached).
        targets = []
        for cell, mask in self.targets:
            targets.append((cell, mask))
        costs = arm_costs(self.geo, maze, open_, pairs, blocked, TABLES[player], targets)
        ladder = dc.SHAPE_LADDER[sid]
        src_cells = maze & (ladder == player)
        src = np.where(src_cells, open_ & ~closed, 0)
        src[:, self.geo.start_cells[player]] = 15
        dist = source_distance(costs, arm_states(src))
        # A gold target entered through a closed arm of its own card does not count: re-check per board.
        for t, (cell, mask) in enumerate(self.targets):
            if mask != 15:
                usable = (mask & ~closed[:, cell]) != 0
                dist[:, t] = np.where(usable, dist[:, t], INF)
        return dist

    def prospects(self, dist: NDArray[np.int64], exclude: NDArray[np.bool_] | None = None,
                  next_move: NDArray[np.bool_] | None = None, share: float = 1.0,
                  boost: bool = False) -> NDArray[np.float64]:  # fmt: skip
        """(k,) sum(value * DECAY ** distance) over the targets. ``exclude``: (k, T) targets taken by the other side;
        ``next_move``: targets the other side may take first (worth ``share`` of their value); ``boost``: this side
        moves next, so a target one placement away counts ``NEXT``."""
        if dist.shape[1] == 0:
            return np.zeros(dist.shape[0])
        w = np.where(dist >= INF, 0.0, DECAY ** np.minimum(dist, 40).astype(np.float64))
        if boost:
            w = np.where(dist == 1, NEXT, w)
        if next_move is not None:
            w = np.where(next_move & (dist > 0), w * share, w)
        if exclude is not None:
            w = np.where(exclude, 0.0, w)
        return np.asarray(w @ self.v, dtype=np.float64)


class DuelExpert(DuelBeliever):
    """The Duel's route-race planner (``expert``; see the module docstring)."""

    name = "expert"

    def act_view(self, view: DuelView, action_mask: NDArray[np.int8]) -> int:
        if view.seat != self.belief.seat:
            self.belief = type(self.belief)(self.config, view.seat)
        self.belief.update(view)
        action = self._choose(view, action_mask)
        self.belief.note_action(action)
        return action

    def _choose(self, view: DuelView, action_mask: NDArray[np.int8]) -> int:
        legal = np.flatnonzero(action_mask)
        if legal.size == 0:
            raise ValueError("act() needs a mask with at least one legal action")
        layout = self.layout
        by: dict[str, list[int]] = {}
        for a, g in zip(legal.tolist(), layout.segment_of[legal].tolist(), strict=True):
            by.setdefault(SEGMENTS[g], []).append(a)
        s = view.public_state()
        me, opp = view.seat, 1 - view.seat
        # 1. Repair (a repair card, else two spare cards), as the greedy agent.
        if view.tools[0].any():
            for seg in ("repair", "double_repair"):
                if seg in by:
                    both = [a for a in by[seg] if layout.decode(a).choice == 2]
                    return int((both or by[seg])[0])
            if "repair_discard" in by:
                targets = self._targets(view, s)
                return self._cheapest_discard(view, s, by["repair_discard"], targets,
                                              self._frontier_best(s, me, targets))  # fmt: skip
        boards = DuelBoards(self.config, s, self.belief.expected_nuggets())
        now_me = boards.distances(boards.shape[None], boards.key[None], boards.counter[None], me)
        now_opp = boards.distances(boards.shape[None], boards.key[None], boards.counter[None], opp)
        can = not view.tools[1].any()
        base_me = float(boards.prospects(now_me, next_move=(now_opp == 1) & can, share=1.0 - NEXT)[0])
        base_opp = float(boards.prospects(now_opp, boost=can)[0])
        best_a, best_score = self._best_maze_move(view, s, by, boards, base_me, base_opp)
        if best_a >= 0 and best_score >= 0.15:
            return best_a
        threat = float(now_opp.min()) if now_opp.size else INF
        if "break" in by and threat <= 3 and not view.tools[1].any():
            return self._pick_break(view, by["break"])
        maps = [a for a in by.get("map", []) if self._unsettled(view, layout.decode(a).slot)]
        if maps:
            return self._pick_map(view, s, maps)
        if best_a >= 0 and best_score > 1e-3:
            return best_a
        if "break" in by and not view.tools[1].any():
            return self._pick_break(view, by["break"])
        if "pass" in by:
            singles = [a for a in by["pass"] if layout.decode(a).kind >= 0]
            if singles:
                targets = self._targets(view, s)
                return self._cheapest_discard(view, s, singles, targets, self._frontier_best(s, me, targets))
        return int(legal[0]) if best_a < 0 else best_a

    def _unsettled(self, view: DuelView, slot: int) -> bool:
        """Whether a map of ``slot`` can tell something: not peeked by me, not revealed, not decided by the pool."""
        if view.my_peeks[slot] >= 0:
            return False
        probs = self.belief.goal_probabilities()
        row = probs[slot]
        return bool(row.sum() > 0 and row.max() < 1.0 - 1e-9)

    def _best_maze_move(self, view: DuelView, s, by: dict[str, list[int]], boards: DuelBoards, base_me: float,
                        base_opp: float) -> tuple[int, float]:  # fmt: skip
        """The maze-changing action with the best (my prospects gained - the opponent's gained), and that score."""
        layout = self.layout
        me, opp = view.seat, 1 - view.seat
        acts: list[int] = []
        shapes, keys, counters, bonus = [], [], [], []
        for seg in MAZE_SEGMENTS:
            for a in by.get(seg, []):
                d = layout.decode(a)
                shape, key, counter = boards.shape.copy(), boards.key.copy(), boards.counter.copy()
                extra = 0.0
                if seg in ("place", "place_bribe"):
                    sid = int(dc.PLACEABLE_SHAPE[d.orientation])
                    shape[d.cell] = sid
                    if seg == "place_bribe":
                        counter[d.cell] = me
                        extra -= 0.15 + (0.3 if view.counters_left <= 2 else 0.0)  # a counter spent
                    nug = int(dc.SHAPE_NUGGETS[sid])
                    if nug:
                        extra += self._gold_card_value(s, me, d.cell, sid, nug)
                elif seg == "rockfall":
                    shape[d.cell] = -1
                    key[d.cell] = False
                elif seg == "key":
                    key[d.cell] = True
                    extra -= 0.05
                else:  # bribe
                    counter[d.cell] = me
                    extra -= 0.15 + (0.3 if view.counters_left <= 2 else 0.0)
                acts.append(a)
                shapes.append(shape)
                keys.append(key)
                counters.append(counter)
                bonus.append(extra)
        if not acts:
            return -1, 0.0
        sh, ky, ct = np.stack(shapes), np.stack(keys), np.stack(counters)
        d_me = boards.distances(sh, ky, ct, me)
        d_opp = boards.distances(sh, ky, ct, opp)
        mine = d_me == 0  # reached at once: I secure it first
        can = not view.tools[1].any()  # the opponent moves next: what it reaches in one placement is likely its own
        gain_me = boards.prospects(d_me, next_move=(d_opp == 1) & can, share=1.0 - NEXT) - base_me
        gain_opp = boards.prospects(d_opp, exclude=mine, boost=can) - base_opp
        score = gain_me - gain_opp + np.array(bonus) + 1e-6 * self.rng.random(len(acts))
        i = int(np.argmax(score))
        return int(acts[i]), float(score[i])

    def _gold_card_value(self, s, me: int, cell: int, sid: int, nuggets: int) -> float:
        """A gold path card: its nuggets when its gold tunnel joins my network at once, else a small loss (the
        opponent may take it)."""
        gold = int(dc.SHAPE_GOLD_BITS[sid])
        closed = int(dc.SHAPE_DOOR[1 - me][sid])
        for d, j in enumerate(self.geo.nbr_list[cell]):
            if j >= 0 and (gold >> d) & 1 and not (closed >> d) & 1 and s.cell_shape[j] >= 0:
                if (s.reach[me][j] >> db.OPP[d]) & 1:
                    return float(nuggets)
        return -0.2 * nuggets


def bench(games: int = 4, base: str = "greedy", layout: str = "seed_5x9", seed: int = 0,
          secret: int | None = None) -> dict:  # fmt: skip
    """Seconds per decision of ``expert`` and of ``base`` in ``games`` seeded duels (``expert`` blue in even games,
    green in odd ones; wall-clock of ``act`` only). Agents' seeds are sealed: from ``secret`` (default this
    process's session secret, ``saboteur_env.common.seeding``) and the game, never from the deal seed."""
    import time

    from agents.registry import make_agent
    from saboteur_env import raw_env
    from saboteur_env.common.seeding import seat_seeds

    env = raw_env(game="duel", duel_layout=layout)
    spent: dict[str, list[float]] = {"expert": [], base: []}
    for g in range(games):
        env.reset(seed=seed + g)
        names = ["expert", base] if g % 2 == 0 else [base, "expert"]
        agents = [make_agent(n, env.config) for n in names]
        for i, (a, agent_seed) in enumerate(zip(agents, seat_seeds(2, ("bench", *names, seed + g), secret),
                                                strict=True)):  # fmt: skip
            a.reset(i, 2, agent_seed)
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
    return {"layout": layout, "games": games, **{f"{n}_ms": round(1e3 * float(np.mean(t)), 2)
                                                 for n, t in spent.items()},
            **{f"{n}_decisions": len(t) for n, t in spent.items()}}  # fmt: skip


__all__ = ["DuelBoards", "DuelExpert", "bench"]
