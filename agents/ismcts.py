"""Belief-sampled single-observer IS-MCTS (agent ``ismcts``) for the base game, Saboteur 2 and the Duel.

Each decision runs ``simulations`` iterations (or as many as fit in ``seconds``). An iteration draws one
determinization of the seat's information set (:mod:`agents.determinize`: roles from the belief posterior, hands,
pile and unseen goals from the unseen cards) on the compiled core and walks one tree whose nodes are the seat's own
decision points (SO-ISMCTS, Cowling et al. 2012); every other seat's moves are drawn by the rollout policy, so a
node pools the opponents' replies over determinizations, and an action is only a candidate where it is legal.

* Selection (``prior="heuristic"``, the default): PUCT, ``Q + c P sqrt(N) / (1 + n)`` over the legal actions,
  with ``P`` from a root ranking (base game: the expected tile distance to the gold each placement leaves, under
  the Bayes gold belief - shorter for a gold-digger, longer for a saboteur - repairs of oneself and maps of unknown
  goals early, breaking oneself and discards last; Saboteur 2 and the Duel: the rollout weights) and from the
  rollout weights below the root; ``c = exploration`` (default 0.1). ``prior="uniform"``: UCB1 with
  availability counts (default c = 0.7), untried actions expanded at random (rollout weights), with progressive
  ``widening`` (``widening * sqrt(visits + 1)`` children at most; None: all).
* Evaluation (``evaluate``): ``"heuristic"`` (base game default) plays ``horizon`` more decisions (default: one
  turn of every seat) with the rollout policy and scores the tunnel's progress towards the determinized gold
  (0.05 a tile) and the change in broken tools of the two teams (0.05 each), signed for the seat's team, or the
  gold earned when the round ends first; ``"rollout"`` (Saboteur 2 and the Duel) plays to the round's end and
  scores the gold earned (the Duel: minus the opponent's), divided by ``scale``.
* Rollout policy: weighted random over the legal actions by kind of move (path placements ``place_weight``,
  discards and passes ``discard_weight``, the rest 1; base game: placements nearer the goals and not dead ends
  likelier, breaking one's own tools rare).
* The move played is the most visited root action (ties: the higher mean, then the lower id). Saboteur 2's theft
  decision is not searched: the thief steals from the richest seat.

Reads only the observation and the mask (the determinizer decodes the view); deterministic for a given seed with a
simulation budget (``seconds`` budgets depend on the machine's speed). A host may set ``agent.stop`` to a callable
that is asked after every iteration: when it answers True the search ends early and plays its best move so far
(the browser table caps a move's time this way and stops when the client leaves or the server shuts down).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from agents.determinize import Determinizer, RoleSampler, make_determinizer
from saboteur_env import GameConfig, action_layout, apply_action, legal_action_mask, returns

__all__ = ["ISMCTSAgent", "Node", "rollout_weights"]

_LOW = ("discard", "pass", "stop", "repair_discard")
_HIGH = ("place", "place_bribe")


def rollout_weights(config: GameConfig, place_weight: float = 4.0, discard_weight: float = 0.25) -> NDArray:
    """Per action id: the rollout policy's weight of its kind of move."""
    lay = action_layout(config)
    if hasattr(lay, "type_arr"):  # the base game: ActionType per id
        from saboteur_env.base.actions import ActionType

        names = [ActionType(int(t)).name.lower() for t in lay.type_arr]
    else:  # Saboteur 2 and the Duel: named segments
        from importlib import import_module

        segments = import_module(type(lay).__module__).SEGMENTS
        names = [segments[int(i)] for i in lay.segment_of]
    w = np.array([place_weight if n in _HIGH else discard_weight if n in _LOW else 1.0 for n in names])
    if hasattr(lay, "type_arr"):
        # Base game: placements nearer the goal row of cells and not dead ends are likelier, so that rollouts
        # dig towards the goals instead of wandering (static per action id, no board analysis in the loop).
        from agents.base.analysis import DEAD_END_KIND
        from saboteur_env.base.actions import ActionType
        from saboteur_env.common.geometry import geometry

        geo = geometry(config)
        place = np.flatnonzero(lay.type_arr == ActionType.PLACE)
        cells = lay.arg_arr[place]
        dist = np.min([np.abs(geo.row_of[cells] - geo.row_of[g]) + np.abs(geo.col_of[cells] - geo.col_of[g])
                       for g in geo.goal_cells], axis=0)  # fmt: skip
        w[place] *= np.exp(-dist / 3.0) * np.where(DEAD_END_KIND[lay.kind_arr[place]], 0.1, 1.0)
        w[place] *= place_weight / w[place].mean()
        w[(lay.type_arr == ActionType.BREAK) & (lay.target_arr == 0)] *= 0.02  # self-harm is rare in play
    return w


class Node:
    """A decision point of the observing seat: visits, total value and availability per action."""

    __slots__ = ("avail", "children", "value", "visits")

    def __init__(self) -> None:
        self.children: dict[int, Node] = {}
        self.visits = 0
        self.value = 0.0
        self.avail: dict[int, int] = {}


class ISMCTSAgent:
    """See the module docstring. ``simulations`` > 0 or ``seconds`` > 0 sets the budget per decision."""

    name = "ismcts"

    def __init__(
        self,
        config: GameConfig,
        simulations: int = 100,
        seconds: float | None = None,
        exploration: float | None = None,
        scale: float | None = None,
        place_weight: float = 4.0,
        discard_weight: float = 0.25,
        role_sampler: type | None = None,
        widening: float | None = 2.0,
        prior: str = "heuristic",
        evaluate: str | None = None,
        horizon: int | None = None,
    ) -> None:
        if not isinstance(simulations, int) or isinstance(simulations, bool) or simulations < 1:
            raise ValueError(f"simulations={simulations!r} must be an int >= 1")
        if seconds is not None and not (isinstance(seconds, (int, float)) and 0 < seconds <= 600):
            raise ValueError(f"seconds={seconds!r} must be in (0, 600] or None")
        if exploration is not None and not (isinstance(exploration, (int, float)) and 0 <= exploration <= 10):
            raise ValueError(f"exploration={exploration!r} must be in [0, 10] or None (the default of the prior)")
        if widening is not None and not (isinstance(widening, (int, float)) and widening > 0):
            raise ValueError(f"widening={widening!r} must be positive or None (expand every legal action)")
        evaluate = evaluate or ("rollout" if config.game in ("sab2", "duel") else "heuristic")
        if evaluate not in ("heuristic", "rollout") or (evaluate == "heuristic" and config.game in ("sab2", "duel")):
            raise ValueError(f"evaluate={evaluate!r} must be 'rollout' or (base game only) 'heuristic'")
        if horizon is not None and not (isinstance(horizon, int) and horizon >= 0):
            raise ValueError(f"horizon={horizon!r} must be an int >= 0 or None (play to the round's end)")
        if prior not in ("heuristic", "uniform"):
            raise ValueError(f"prior={prior!r} must be 'heuristic' or 'uniform'")
        if place_weight <= 0 or discard_weight <= 0:
            raise ValueError(f"place_weight={place_weight} and discard_weight={discard_weight} must be positive")
        self.config = config
        self.simulations, self.seconds = simulations, seconds
        # UCB1 on gold (uniform prior) explores at 0.7; PUCT on the heuristic values (a tile = 0.05) at 0.1.
        self.exploration = float(exploration if exploration is not None else 0.7 if prior == "uniform" else 0.1)
        self.scale = float(scale) if scale is not None else (10.0 if config.game == "duel" else 5.0)
        if not self.scale > 0:
            raise ValueError(f"scale={scale!r} must be positive")
        self.weights = rollout_weights(config, place_weight, discard_weight)
        self.role_sampler = role_sampler
        self.widening, self.prior = widening, prior
        self.evaluate = evaluate
        self.horizon = horizon if horizon is not None or evaluate == "rollout" else config.num_players
        self._root_order: dict[int, int] | None = None
        self.rng = np.random.default_rng()
        self.seat = 0
        self.det: Determinizer | None = None
        self.last_stats: dict[str, float] = {}
        self.stop: Callable[[], bool] | None = None  # asked after each iteration: True ends the search (see above)

    # ---- protocol ----
    def reset(self, seat: int, num_players: int, seed: int | None) -> None:
        if num_players != self.config.num_players:
            raise ValueError(f"num_players={num_players} does not match the config ({self.config.num_players})")
        if not 0 <= seat < num_players:
            raise ValueError(f"seat={seat} out of range 0..{num_players - 1}")
        self.rng = np.random.default_rng(seed)
        self.seat = seat
        roles: RoleSampler | None = None
        if self.role_sampler is not None:
            roles = self.role_sampler(self.config, seat)
        self.det = make_determinizer(self.config, seat, roles)

    def observe(self, observation: NDArray[np.float32]) -> None:
        """Follow the game without acting (optional: keeps the event log complete with short histories)."""
        if self.det is None:
            raise ValueError("call reset(seat, num_players, seed) before observe()")
        self.det.observe(observation)

    def act(self, observation: NDArray[np.float32], action_mask: NDArray[np.int8]) -> int:
        if self.det is None:
            raise ValueError("call reset(seat, num_players, seed) before act()")
        mask = np.asarray(action_mask).astype(bool)
        legal = np.flatnonzero(mask)
        if legal.size == 0:
            raise ValueError("act() needs a mask with at least one legal action")
        view = self.det.observe(observation)
        if self.config.game == "sab2" and int(view.phase) == 3:  # Phase.THEFT: not searched
            return self._steal(view, legal)
        if legal.size == 1:
            self.last_stats = {"simulations": 0, "seconds": 0.0}
            return int(legal[0])
        root = Node()
        self._root_order = self._root_prior(view, legal) if self.prior == "heuristic" else None
        t0 = time.perf_counter()
        done = 0
        while True:
            state = self.det.sample(self.rng)
            self._iterate(root, state, mask)
            done += 1
            if self.stop is not None and self.stop():
                break
            if self.seconds is not None:
                if time.perf_counter() - t0 >= self.seconds:
                    break
            elif done >= self.simulations:
                break
        self.last_stats = {"simulations": done, "seconds": time.perf_counter() - t0}
        return self._best(root, legal)

    def _steal(self, view: Any, legal: NDArray[np.int64]) -> int:
        """Saboteur 2's theft decision: take the gold of the richest seat that has some to take (the gold totals
        are public; ties: the nearest seat clockwise)."""
        lay = action_layout(self.config)
        best, key = int(legal[0]), -1
        for a in legal.tolist():
            act = lay.decode(a)
            gold = int(view.gold[act.target]) if act.segment == "steal" and act.target >= 0 else -1
            if gold > key:
                best, key = a, gold
        return best

    # ---- search ----
    def _score(self, state: Any) -> float:
        r = returns(state)
        if self.config.game == "duel":
            return float(r[self.seat] - r[1 - self.seat])
        return float(r[self.seat])

    def _rollout_action(self, state: Any) -> int:
        legal = np.flatnonzero(legal_action_mask(state))
        w = np.cumsum(self.weights[legal])
        return int(legal[min(int(np.searchsorted(w, self.rng.random() * w[-1], side="right")), legal.size - 1)])

    def _features(self, state: Any) -> tuple[float, float, int]:
        """Base game, heuristic evaluation: tile distance from the tunnel to the (determinized) gold, broken tools
        of saboteurs minus those of gold-diggers, and the seat's role in this determinization."""
        from agents.base.analysis import PublicBoard
        from agents.base.tracker import analysed
        from saboteur_env.base.cards import KIND_GOAL_GOLD

        board = analysed(PublicBoard(self.config, np.asarray(state.cell_shape, dtype=np.int16).copy()))
        gold = int(np.flatnonzero(np.asarray(state.goal_kind) == KIND_GOAL_GOLD)[0])
        roles = np.asarray(state.roles)
        broken = np.asarray(np.asarray(state.broken).any(axis=1), dtype=bool)
        tools = float(broken[roles == 1].sum() - broken[roles == 0].sum())
        return float(min(int(board.distance[gold]), 20)), tools, int(roles[self.seat])

    def _progress(self, state: Any, before: tuple[float, float, int]) -> float:
        """Value of a position the rollout stopped in before the round's end: the tunnel's progress towards the
        gold over the rollout (a tile = 0.05) and the change in broken tools (0.05 each), for the seat's team."""
        d0, t0, role = before
        d1, t1, _ = self._features(state)
        value = 0.05 * (d0 - d1) + 0.05 * (t1 - t0)
        return -value if role == 1 else value

    @staticmethod
    def _over(state: Any) -> bool:
        return bool(state.round_just_ended or state.game_over)

    def _iterate(self, root: Node, state: Any, root_mask: NDArray[np.bool_]) -> None:
        seat, c = self.seat, self.exploration
        start = self._score(state)
        before = self._features(state) if self.evaluate == "heuristic" else None
        node, path = root, [root]
        first = True
        while not self._over(state):
            if state.current != seat:
                state = apply_action(state, self._rollout_action(state), inplace=True)
                continue
            mask = legal_action_mask(state)
            if first:  # the root: the real mask (the determinization's is the same; this keeps it so)
                mask = mask & root_mask
                first = False
            legal = np.flatnonzero(mask).tolist()
            for a in legal:
                node.avail[a] = node.avail.get(a, 0) + 1
            if self.prior == "heuristic":  # PUCT over every legal action, the prior steering a small budget
                pick = self._puct(node, legal, node is root)
                child = node.children.get(pick)
                grown = child is None
                if child is None:
                    child = node.children[pick] = Node()
                state = apply_action(state, pick, inplace=True)
                path.append(child)
                node = child
                if grown:
                    break
                continue
            new = self._expand(node, legal, is_root=node is root)
            if new is not None:
                child = node.children[new] = Node()
                state = apply_action(state, new, inplace=True)
                path.append(child)
                break
            best, best_ucb = -1, -math.inf
            for a in legal:
                ch = node.children.get(a)
                if ch is None:
                    continue
                ucb = ch.value / ch.visits + c * math.sqrt(math.log(node.avail[a]) / ch.visits)
                if ucb > best_ucb:
                    best, best_ucb = a, ucb
            node = node.children[best]
            path.append(node)
            state = apply_action(state, best, inplace=True)
        steps = 0
        while not self._over(state) and (self.horizon is None or steps < self.horizon):
            state = apply_action(state, self._rollout_action(state), inplace=True)
            steps += 1
        if self._over(state) or before is None:
            value = (self._score(state) - start) / self.scale
        else:
            value = self._progress(state, before)
        for n in path:
            n.visits += 1
            n.value += value

    def _puct(self, node: Node, legal: list[int], is_root: bool) -> int:
        """argmax of Q + c P sqrt(N) / (1 + n): P from the root ranks (exp(-rank / 2)) or the rollout weights,
        Q of an untried action = the node's mean value."""
        if is_root and self._root_order is not None:
            rank = self._root_order
            p = np.exp(-np.array([rank.get(a, len(rank)) for a in legal], dtype=float) / 2.0)
        else:
            p = self.weights[legal].astype(float)
        p /= p.sum()
        parent_q = node.value / node.visits if node.visits else 0.0
        root_n = math.sqrt(node.visits + 1)
        best, best_score = legal[0], -math.inf
        for i, a in enumerate(legal):
            ch = node.children.get(a)
            n = ch.visits if ch is not None else 0
            q = ch.value / n if ch is not None and n else parent_q
            score = q + self.exploration * p[i] * root_n / (1 + n)
            if score > best_score:
                best, best_score = a, score
        return best

    def _expand(self, node: Node, legal: list[int], is_root: bool) -> int | None:
        """The action to add as a new child of ``node``, or None to select among its children.

        ``prior="uniform"``: a random untried action (weighted as the rollout policy). ``"heuristic"``: untried
        actions in prior order (the root: :meth:`_root_prior`; deeper: the rollout weights), and with
        ``widening`` a node gets a new child only while it has fewer than ``widening * sqrt(visits + 1)`` legal
        children (progressive widening: with a small budget the search concentrates on the likelier moves)."""
        untried = [a for a in legal if a not in node.children]
        if not untried:
            return None
        if self.widening is not None:
            tried = len(legal) - len(untried)
            if tried >= 1 and tried >= self.widening * math.sqrt(node.visits + 1):
                return None
        if self.prior == "uniform":
            w = self.weights[untried]
            return untried[int(self.rng.choice(len(untried), p=w / w.sum()))]
        if is_root and self._root_order is not None:
            rank = self._root_order
            return min(untried, key=lambda a: rank.get(a, len(rank)))
        w = self.weights
        return max(untried, key=lambda a: (w[a], -a))

    def _root_prior(self, view: Any, legal: NDArray[np.int64]) -> dict[int, int]:
        """Rank (0 = first to try) of each legal root action. Base game: path placements by the expected tile
        distance to the gold they leave (shorter for a gold-digger, longer for a saboteur; the gold belief of the
        determinizer's role sampler), repairing oneself and useful maps before other moves, discards last.
        Saboteur 2 and the Duel: the rollout weights."""
        w = self.weights[legal]
        score = w.astype(float)
        if self.config.game not in ("sab2", "duel") and hasattr(view, "open_bits"):
            score = self._base_scores(view, legal)
        order = sorted(range(legal.size), key=lambda i: (-score[i], -w[i], int(legal[i])))
        return {int(legal[i]): r for r, i in enumerate(order)}

    def _base_scores(self, view: Any, legal: NDArray[np.int64]) -> NDArray[np.float64]:
        from agents.base.analysis import DEAD_END_KIND, board_from_view, expectation, placement_outcomes
        from agents.base.tracker import analysed, known_gold
        from saboteur_env.base.actions import ActionType

        lay = action_layout(self.config)
        sampler = getattr(self.det, "roles", None)
        model = getattr(sampler, "model", None)
        pg = model.p_gold() if model is not None else known_gold(view)
        board = analysed(board_from_view(view))
        cap = 20
        now = float(expectation(np.minimum(board.distance, cap), pg))
        saboteur = view.role == 1
        types = lay.type_arr[legal]
        score = np.full(legal.size, -1.0)
        place = types == ActionType.PLACE
        if place.any():
            ids = legal[place]
            out = placement_outcomes(board, lay.arg_arr[ids], lay.orientation_arr[ids])
            gain = now - expectation(np.minimum(out, cap), pg)
            dead = DEAD_END_KIND[lay.kind_arr[ids]]
            score[place] = -gain + 0.5 * dead if saboteur else gain - 0.5 * dead
        own = lay.target_arr[legal] == 0
        score[((types == ActionType.REPAIR) | (types == ActionType.DOUBLE_REPAIR)) & own] = 3.0
        maps = types == ActionType.MAP
        unknown = np.array([view.goal_knowledge[g] is None for g in lay.arg_arr[legal[maps]]], dtype=bool)
        score[maps] = np.where(unknown & (pg.max() < 0.99) & (not saboteur), 1.5, -2.0)
        score[types == ActionType.BREAK] = 0.5 if saboteur else 0.0
        score[(types == ActionType.BREAK) & own] = -5.0  # never break one's own tools
        score[types == ActionType.ROCKFALL] = 0.0 if saboteur else -0.5
        score[types == ActionType.DISCARD] = -3.0
        return score

    @staticmethod
    def _best(root: Node, legal: NDArray[np.int64]) -> int:
        best, key = int(legal[0]), (-1, -math.inf)
        for a in legal.tolist():
            ch = root.children.get(a)
            k = (ch.visits, ch.value / ch.visits) if ch is not None and ch.visits else (0, -math.inf)
            if k > key:
                best, key = a, k
        return best
