"""Claims as cheap talk (``GameConfig(claims=True)``): free public statements as a layer over the compiled game.

A claim is a statement a seat makes at its own turn, before its card play, or in a *report window* right after it
used a map (or, in Saboteur 2, an inspection): "goal g is gold", "goal g is stone", and in the games with hidden
roles "seat +t is a saboteur" (accuse), "seat +t is not a saboteur" (clear) and "I suspect seat +t" (suspect).
Claims cost no card and never change the game: the game runs on ``config.game_config`` (the same config without
claims) and this module keeps everything else in numpy arrays, for one game (``ClaimsBatch(config, 1)``, the AEC
environment) or a batch (``saboteur_env.vector.VectorEnv``). The rules are in docs/rules.md "Claims (optional
rule)"; docs/claims.md has the design and the measurements.

Action ids. The claim ids follow the game's ``A`` ids (``ClaimLayout``): ``goal`` (``2 G``: ``A + 2 g`` "goal g is
gold", ``A + 2 g + 1`` "goal g is stone"; G goal slots, top to bottom / the Duel's slot order), then, where the game
has roles, ``accuse``, ``clear``, ``suspect`` (``N - 1`` each, seat offsets 1..N-1 as in the game's actions), then
``done`` (close a report window). A claim keeps the turn with the same seat.

The bound. At most K = ``config.claims_per_turn`` claims before each game decision and K in a report window (the
window closes after K claims or at ``done``); goal claims on face-up goals are masked (their truth is public). So a
round has at most (2K + 2) times the game's decisions (``config.max_decisions_per_round``).

Truth labels. Each logged claim carries ``truth`` (its content is true in the hidden state when made) and
``known`` (the speaker had seen the fact: a map on that goal, the goal face up, or a Saboteur 2 inspection of that
seat); a *lie* is a known false claim. Labels live only in the log (``ClaimsBatch.records``): observations carry
the public part (speaker, kind, target, value), never ``truth`` or ``known``.

Observation block, appended after the game's observation (seat-relative like the game's): ``status`` (claims
made since the last game decision, whether the viewer's report window is open, whether anyone's is), ``goals``
(N speaker offsets x G goals x {gold, stone}: each seat's latest goal claim this round), ``seats`` (N speaker
offsets x N target offsets x {accuse, clear, suspect}: latest this round; absent in the Duel) and ``history`` (the
last ``history_length`` claims, newest first: valid, speaker offset, kind, goal, target offset, value, this round).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from saboteur_env.base.cards import KIND_GOAL_GOLD, Role
from saboteur_env.common.config import GameConfig
from saboteur_env.common.errors import ConfigError, IllegalActionError, check_action_id
from saboteur_env.duel.cards import GOAL_NUGGETS
from saboteur_env.sab2.cards import KIND_GOALS, Sab2Role

GOAL, ACCUSE, CLEAR, SUSPECT, DONE = range(5)
KIND_NAMES = ("goal", "accuse", "clear", "suspect", "done")
# Columns of the claims log (int32 rows); TRUTH and KNOWN are hidden-state labels, never observed.
LOG_COLUMNS = ("slot", "game", "round", "step", "speaker", "kind", "target", "value", "truth", "known")
SLOT, GAME, ROUND, STEP, SPEAKER, KIND, TARGET, VALUE, TRUTH, KNOWN = range(len(LOG_COLUMNS))

Fields = Callable[[str], NDArray[Any]]  # field name -> array with a leading slot axis


@dataclass(frozen=True)
class _Facts:
    """What the claims layer reads from a game's state (field names of the core and the numpy engines)."""

    roles: bool
    saboteur: int
    goal_field: str
    gold: Callable[[NDArray[Any]], NDArray[np.bool_]]
    inspect_field: str | None  # (P, P) role seen, -1 none (Saboteur 2)


def _base_gold(kind: NDArray[Any]) -> NDArray[np.bool_]:
    return np.asarray(kind == KIND_GOAL_GOLD)


def _sab2_gold(kind: NDArray[Any]) -> NDArray[np.bool_]:
    return np.asarray(kind == KIND_GOALS[0])


def _duel_gold(card: NDArray[Any]) -> NDArray[np.bool_]:
    # "Gold" in the Duel: the goal card carries at least one nugget (docs/rules.md §3.11).
    return np.asarray(GOAL_NUGGETS[np.clip(card, 0, len(GOAL_NUGGETS) - 1)] > 0)


_FACTS = {
    "base": _Facts(True, int(Role.SABOTEUR), "goal_kind", _base_gold, None),
    "sab2": _Facts(True, int(Sab2Role.SABOTEUR), "goal_kind", _sab2_gold, "inspected"),
    "duel": _Facts(False, -1, "goal_card", _duel_gold, None),
}


def _facts(config: GameConfig) -> _Facts:
    # A registered variant built on a game (a subclass of its variant) plays that game's claims.
    for cls in type(config.variant).__mro__:
        name = getattr(cls, "name", None)
        if isinstance(name, str) and name in _FACTS:
            return _FACTS[name]
    raise ConfigError(f"claims=True is not available for game={config.game!r}; valid: {', '.join(_FACTS)}")


def state_fields(state: Any) -> Fields:
    """The field reader of one game's state (core or numpy engine) as a batch of one."""
    return lambda name: np.asarray(getattr(state, name))[None]


@dataclass(frozen=True)
class Claim:
    """A decoded claim id: ``kind`` (``GOAL`` ... ``DONE``), ``target`` (goal slot, or seat offset 1..N-1) and
    ``value`` (goal claims: 1 gold, 0 stone; otherwise 1)."""

    kind: int
    target: int
    value: int


class ClaimLayout:
    """The claim ids after a game's actions and the claims block after its observation (module docstring)."""

    def __init__(self, config: GameConfig) -> None:
        if not config.claims:
            raise ConfigError("ClaimLayout needs a config with claims=True")
        self.config = config
        self.game_config = g = config.game_config
        self.facts = _facts(config)
        self.k = config.claims_per_turn
        self.num_players = n = config.num_players
        self.num_goals = len(g.frame.goal_cells)
        self.game_actions = a = g.variant.action_layout(g).num_actions
        self.roles = self.facts.roles
        seat_ids = n - 1 if self.roles else 0
        self.offsets = {"goal": a, "accuse": a + 2 * self.num_goals}
        self.offsets["clear"] = self.offsets["accuse"] + seat_ids
        self.offsets["suspect"] = self.offsets["clear"] + seat_ids
        self.offsets["done"] = self.offsets["suspect"] + seat_ids
        self.done_id = self.offsets["done"]
        self.num_claims = self.done_id + 1 - a
        self.num_actions = self.done_id + 1
        # Observation block.
        self.history = g.history_length
        self.row_size = 1 + n + 4 + self.num_goals + n + 2
        sizes = {"status": 3, "goals": n * self.num_goals * 2, "seats": n * n * 3 if self.roles else 0,
                 "history": self.history * self.row_size}  # fmt: skip
        self.slices: dict[str, slice] = {}
        start = 0
        for name, size in sizes.items():
            self.slices[name] = slice(start, start + size)
            start += size
        self.size = start
        self.high = np.ones(self.size, dtype=np.float32)
        self.high[0] = self.k

    # ---- codec ----
    def is_claim(self, action: int) -> bool:
        return action >= self.game_actions

    def check(self, action: object) -> int:
        """An action id of the claims game (game ids then claim ids) as ``int``; ``ActionError`` otherwise."""
        return check_action_id(action, self.num_actions)

    def decode(self, action: int) -> Claim:
        a = self.check(action)
        if a < self.game_actions:
            raise IllegalActionError(f"action {a} is a game action, not a claim (claims are {self.game_actions}.."
                                     f"{self.num_actions - 1})")  # fmt: skip
        if a == self.done_id:
            return Claim(DONE, 0, 0)
        if a < self.offsets["accuse"]:
            g, stone = divmod(a - self.game_actions, 2)
            return Claim(GOAL, g, 1 - stone)
        for kind, name in ((ACCUSE, "accuse"), (CLEAR, "clear"), (SUSPECT, "suspect")):
            lo = self.offsets[name]
            if lo <= a < lo + self.num_players - 1:
                return Claim(kind, a - lo + 1, 1)
        raise AssertionError(a)  # unreachable: the segments cover every id

    def encode(self, kind: int, target: int, value: int = 1) -> int:
        """The id of a claim; ``ActionError`` names a bad field and its range."""
        from saboteur_env.common.errors import ActionError

        if kind == DONE:
            return self.done_id
        if kind == GOAL:
            if not 0 <= target < self.num_goals or value not in (0, 1):
                raise ActionError(f"goal claim target={target} value={value}: valid goals 0..{self.num_goals - 1}, "
                                  "value 1 (gold) or 0 (stone)")  # fmt: skip
            return self.game_actions + 2 * target + (1 - value)
        if kind in (ACCUSE, CLEAR, SUSPECT) and self.roles:
            if not 1 <= target < self.num_players:
                raise ActionError(f"{KIND_NAMES[kind]} claim target offset {target}: valid 1..{self.num_players - 1}")
            return self.offsets[KIND_NAMES[kind]] + target - 1
        valid = "goal, accuse, clear, suspect, done" if self.roles else "goal, done"
        raise ActionError(f"claim kind {kind!r} is not valid for game={self.config.game!r}; valid: {valid}")

    def to_string(self, action: int) -> str:
        c = self.decode(action)
        if c.kind == DONE:
            return "claim: done"
        if c.kind == GOAL:
            return f"claim: goal {c.target} is {'gold' if c.value else 'stone'}"
        text = {ACCUSE: "seat +{} is a saboteur", CLEAR: "seat +{} is not a saboteur", SUSPECT: "I suspect seat +{}"}
        return "claim: " + text[c.kind].format(c.target)

    def split(self, block: NDArray[np.float32]) -> dict[str, NDArray[np.float32]]:
        """Named views of a claims block (or of the tail of an observation)."""
        block = block[-self.size:] if self.size else block[:0]
        n, g = self.num_players, self.num_goals
        return {
            "status": block[self.slices["status"]],
            "goals": block[self.slices["goals"]].reshape(n, g, 2),
            "seats": block[self.slices["seats"]].reshape(n, n, 3) if self.roles else block[self.slices["seats"]],
            "history": block[self.slices["history"]].reshape(self.history, self.row_size),
        }

    def decode_history(self, block: NDArray[np.float32]) -> list[dict[str, int]]:
        """The public claims in a block's history (newest first), as dicts with seat offsets."""
        n, g = self.num_players, self.num_goals
        out = []
        for row in self.split(block)["history"]:
            if row[0] < 0.5:
                continue
            speaker = int(np.argmax(row[1:1 + n]))
            kind = int(np.argmax(row[1 + n:5 + n]))
            goal = int(np.argmax(row[5 + n:5 + n + g]))
            target = int(np.argmax(row[5 + n + g:5 + 2 * n + g]))
            out.append({"speaker": speaker, "kind": kind, "target": goal if kind == GOAL else target,
                        "value": int(row[-2] > 0.5), "this_round": int(row[-1] > 0.5)})  # fmt: skip
        return out


def layout(config: GameConfig) -> ClaimLayout:
    """The cached claim layout of a claims config."""
    return config.cached("_claim_layout", ClaimLayout)


class ClaimsBatch:
    """The claims state of ``num_slots`` games of one claims config (one for the AEC environment), in arrays.

    The game states are passed in as field readers (``state_fields`` for one game, ``Batch.field`` for a batch):
    nothing here changes a game.
    """

    def __init__(self, config: GameConfig, num_slots: int) -> None:
        self.lay = lay = layout(config)
        self.config = config
        b, n, g = num_slots, lay.num_players, lay.num_goals
        self.num_slots = b
        self.pending = np.zeros(b, dtype=np.int64)  # claims since the last game decision
        self.window = np.full(b, -1, dtype=np.int64)  # seat whose report window is open, -1 none
        self.steps = np.zeros(b, dtype=np.int64)  # decisions of the current game, claims included
        self.games = np.zeros(b, dtype=np.int64)  # games started in the slot
        self.latest_goal = np.full((b, n, g), -1, dtype=np.int8)  # this round: -1 none, 1 gold, 0 stone
        self.latest_seat = np.full((b, n, n), -1, dtype=np.int8)  # this round: -1 none, else ACCUSE/CLEAR/SUSPECT
        h = max(lay.history, 1)
        self.hist = np.zeros((b, h, 5), dtype=np.int16)  # ring: speaker, kind, target, value, round
        self.hist_count = np.zeros(b, dtype=np.int64)
        self._log = np.zeros((64, len(LOG_COLUMNS)), dtype=np.int32)
        self.log_size = 0

    # ---- lifecycle ----
    def new_games(self, slots: NDArray[np.int64] | None = None) -> None:
        """Clear the claims of ``slots`` (default all) for a new game; the log keeps earlier games."""
        s = np.arange(self.num_slots) if slots is None else np.asarray(slots, dtype=np.int64)
        self.pending[s] = 0
        self.window[s] = -1
        self.steps[s] = 0
        self.games[s] += 1
        self.latest_goal[s] = -1
        self.latest_seat[s] = -1
        self.hist_count[s] = 0

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "lay"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.lay = layout(self.config)

    # The per-slot arrays that are the claims state of the games in flight (the log is not: it is labels).
    STATE = ("pending", "window", "steps", "games", "latest_goal", "latest_seat", "hist", "hist_count")

    def copy_state(self, other: ClaimsBatch) -> None:
        """Take ``other``'s claims state, slot for slot (same configuration and number of slots)."""
        if other.config != self.config or other.num_slots != self.num_slots:
            raise ConfigError(f"claims state of {other.num_slots} slots of {other.config!r} does not fit "
                              f"{self.num_slots} slots of {self.config!r}")  # fmt: skip
        for name in self.STATE:
            getattr(self, name)[...] = getattr(other, name)

    @classmethod
    def from_blocks(cls, config: GameConfig, seats: NDArray[np.integer[Any]], rounds: NDArray[np.integer[Any]],
                    blocks: NDArray[np.floating[Any]]) -> ClaimsBatch:  # fmt: skip
        """The claims state as seat ``seats[b]`` sees it in its claims block ``blocks[b]`` (at its own decision, in
        round ``rounds[b]``), one slot per row: every claim is public, so :meth:`encode` gives that seat the same
        block again (what a search needs to play on from a determinization). Only the ``history_length`` latest
        claims are known: older ones no longer show in any observation. The log (truth labels) starts empty."""
        lay = layout(config)
        seats = np.asarray(seats, dtype=np.int64)
        blocks = np.asarray(blocks, dtype=np.float32)
        b = seats.size
        if blocks.shape != (b, lay.size):
            raise ConfigError(f"claims blocks must be {b} rows of {lay.size} (got shape {blocks.shape})")
        out = cls(config, b)
        n, g = lay.num_players, lay.num_goals
        ar = np.arange(b)
        rel = (seats[:, None] + np.arange(n)[None, :]) % n  # offset -> absolute seat
        st = blocks[:, lay.slices["status"]]
        out.pending[:] = np.rint(st[:, 0]).astype(np.int64)
        out.window[:] = np.where(st[:, 1] > 0.5, seats, -1)
        goals = blocks[:, lay.slices["goals"]].reshape(b, n, g, 2)
        latest = np.where(goals[..., 0] > 0.5, 1, np.where(goals[..., 1] > 0.5, 0, -1)).astype(np.int8)
        out.latest_goal[ar[:, None], rel] = latest
        if lay.roles:
            seat_block = blocks[:, lay.slices["seats"]].reshape(b, n, n, 3)
            kinds = np.where(seat_block[..., 0] > 0.5, ACCUSE, np.where(
                seat_block[..., 1] > 0.5, CLEAR, np.where(seat_block[..., 2] > 0.5, SUSPECT, -1))).astype(np.int8)
            out.latest_seat[ar[:, None, None], rel[:, :, None], rel[:, None, :]] = kinds
        if lay.history:
            hist = blocks[:, lay.slices["history"]].reshape(b, lay.history, lay.row_size)
            valid = hist[:, :, 0] > 0.5
            count = valid.sum(axis=1).astype(np.int64)  # newest first, the valid rows are a prefix
            out.hist_count[:] = count
            rounds = np.asarray(rounds, dtype=np.int64)
            for j in range(lay.history):
                v = np.flatnonzero(valid[:, j])
                if v.size == 0:
                    break
                row = hist[v, j]
                speaker = (seats[v] + row[:, 1 : 1 + n].argmax(axis=1)) % n
                kind = row[:, 1 + n : 5 + n].argmax(axis=1)
                target = np.where(kind == GOAL, row[:, 5 + n : 5 + n + g].argmax(axis=1),
                                  (seats[v] + row[:, 5 + n + g : 5 + n + g + n].argmax(axis=1)) % n)  # fmt: skip
                this_round = row[:, -1] > 0.5
                idx = (count[v] - 1 - j) % out.hist.shape[1]
                out.hist[v, idx] = np.stack([speaker, kind, target, np.rint(row[:, -2]),
                                             np.where(this_round, rounds[v], rounds[v] - 1)], axis=1)  # fmt: skip
        return out

    def clone(self) -> ClaimsBatch:
        other = object.__new__(ClaimsBatch)
        other.__dict__.update({k: v.copy() if isinstance(v, np.ndarray) else v for k, v in self.__dict__.items()})
        return other

    # ---- who acts, what is legal ----
    def acting(self, current: NDArray[np.int64]) -> NDArray[np.int64]:
        """The seat to act per slot: the report window's seat when one is open, else the game's."""
        return np.where(self.window >= 0, self.window, current)

    def claim_mask(self, get: Fields, game_over: NDArray[np.bool_] | None = None) -> NDArray[np.int8]:
        """``(slots, num_claims)`` int8: the legal claim ids of the seat to act (module docstring)."""
        lay = self.lay
        b = self.num_slots
        out = np.zeros((b, lay.num_claims), dtype=np.int8)
        can = self.pending < lay.k
        if game_over is not None:
            can &= ~game_over
        revealed = get("goal_revealed").astype(bool).reshape(b, lay.num_goals)
        goal_ok = can[:, None] & ~revealed
        out[:, : 2 * lay.num_goals] = np.repeat(goal_ok, 2, axis=1)
        if lay.roles:
            out[:, 2 * lay.num_goals: lay.num_claims - 1] = can[:, None]
        out[:, -1] = self.window >= 0
        return out

    def full_mask(self, game_mask: NDArray[Any], get: Fields, game_over: NDArray[np.bool_] | None = None
                  ) -> NDArray[np.int8]:
        """Game mask (zeroed where a report window is open) followed by the claim mask."""
        gm = np.asarray(game_mask).astype(np.int8, copy=True).reshape(self.num_slots, -1)[:, : self.lay.game_actions]
        gm[self.window >= 0] = 0
        return np.concatenate([gm, self.claim_mask(get, game_over)], axis=1)

    # ---- transitions ----
    def apply_claims(self, slots: NDArray[np.int64], actions: NDArray[np.int64], current: NDArray[np.int64],
                     rounds: NDArray[np.int64], get: Fields, game_over: NDArray[np.bool_] | None = None) -> None:
        """Record the claims ``actions[i]`` of ``slots[i]`` (``current``/``rounds``: every slot's game seat and
        round). Raises ``IllegalActionError`` before any change if one is not legal."""
        lay = self.lay
        slots = np.asarray(slots, dtype=np.int64)
        acts = np.asarray(actions, dtype=np.int64)
        if slots.size == 0:
            return
        mask = self.claim_mask(get, game_over)
        ids = acts - lay.game_actions
        if ((ids < 0) | (ids >= lay.num_claims)).any() or not mask[slots, np.clip(ids, 0, lay.num_claims - 1)].all():
            bad = int(np.flatnonzero((ids < 0) | (ids >= lay.num_claims)
                                     | ~mask[slots, np.clip(ids, 0, lay.num_claims - 1)].astype(bool))[0])  # fmt: skip
            a = int(acts[bad])
            why = "the claim bound of this turn is reached" if self.pending[slots[bad]] >= lay.k else "not legal now"
            if lay.is_claim(a) and a == lay.done_id:
                why = "no report window is open"
            raise IllegalActionError(f"claim {a} ({lay.to_string(a) if lay.is_claim(a) else 'a game action'}) of "
                                     f"game {int(slots[bad])}: {why}; no game was changed")  # fmt: skip
        seat = self.acting(current)[slots]
        done = acts == lay.done_id
        talk = ~done
        self.steps[slots] += 1
        if talk.any():
            self._record(slots[talk], acts[talk], seat[talk], np.asarray(rounds)[slots[talk]], get)
            self.pending[slots[talk]] += 1
        # A report window closes at "done" or after K claims; the next seat starts with a fresh count.
        close = (self.window[slots] >= 0) & (done | (self.pending[slots] >= lay.k))
        self.window[slots[close]] = -1
        self.pending[slots[close]] = 0

    def knowledge(self, get: Fields) -> NDArray[np.int64]:
        """Per slot and seat, how many private facts the seat has seen (maps used, inspections): a report window
        opens when a seat's count grows with its own game action."""
        b = self.num_slots
        k = get("peeked").astype(np.int64).reshape(b, self.lay.num_players, -1).sum(axis=2)
        field = self.lay.facts.inspect_field
        if field is not None:
            k = k + (get(field).reshape(b, self.lay.num_players, -1) >= 0).sum(axis=2)
        return k

    def after_game_actions(self, slots: NDArray[np.int64], actors: NDArray[np.int64], before: NDArray[np.int64],
                           get: Fields, round_ended: NDArray[np.bool_], game_over: NDArray[np.bool_]) -> None:
        """Bookkeeping after the game actions of ``slots`` by ``actors`` (``before``: ``knowledge`` of every slot
        before them; ``round_ended``/``game_over`` per slot)."""
        slots = np.asarray(slots, dtype=np.int64)
        if slots.size == 0:
            return
        self.steps[slots] += 1
        self.pending[slots] = 0
        ended = np.asarray(round_ended)[slots]
        self.latest_goal[slots[ended]] = -1
        self.latest_seat[slots[ended]] = -1
        after = self.knowledge(get)
        learned = after[slots, actors] > before[slots, actors]
        open_ = learned & ~ended & ~np.asarray(game_over)[slots]
        self.window[slots[open_]] = actors[open_]

    def _record(self, slots: NDArray[np.int64], acts: NDArray[np.int64], speaker: NDArray[np.int64],
                rounds: NDArray[np.int64], get: Fields) -> None:
        lay, n = self.lay, self.lay.num_players
        m = slots.size
        ids = acts - lay.game_actions
        kind = np.full(m, GOAL, dtype=np.int64)
        target = np.zeros(m, dtype=np.int64)
        value = np.ones(m, dtype=np.int64)
        is_goal = ids < 2 * lay.num_goals
        target[is_goal] = ids[is_goal] // 2
        value[is_goal] = 1 - ids[is_goal] % 2
        rest = ~is_goal
        if rest.any():
            j = ids[rest] - 2 * lay.num_goals
            kind[rest] = ACCUSE + j // (n - 1)
            target[rest] = (speaker[rest] + j % (n - 1) + 1) % n  # absolute seat
        truth = np.zeros(m, dtype=np.int64)
        known = np.zeros(m, dtype=np.int64)
        if is_goal.any():
            s, g = slots[is_goal], target[is_goal]
            gold = lay.facts.gold(get(lay.facts.goal_field)[s, g])
            truth[is_goal] = gold == (value[is_goal] == 1)
            peeked = get("peeked").reshape(self.num_slots, n, -1)[s, speaker[is_goal], g].astype(bool)
            known[is_goal] = peeked | get("goal_revealed").reshape(self.num_slots, -1)[s, g].astype(bool)
        if rest.any():
            s, t = slots[rest], target[rest]
            sab = get("roles")[s, t] == lay.facts.saboteur
            truth[rest] = np.where(kind[rest] == CLEAR, ~sab, sab)
            if lay.facts.inspect_field is not None:
                known[rest] = get(lay.facts.inspect_field)[s, speaker[rest], t] >= 0
        rows = np.stack([slots, self.games[slots], rounds, self.steps[slots] - 1, speaker, kind, target, value,
                         truth, known], axis=1).astype(np.int32)  # fmt: skip
        self._append(rows)
        # Public summaries for the observations.
        goal_rows = is_goal
        self.latest_goal[slots[goal_rows], speaker[goal_rows], target[goal_rows]] = value[goal_rows]
        self.latest_seat[slots[rest], speaker[rest], target[rest]] = kind[rest]
        h = self.hist.shape[1]
        for i in range(m):  # a few claims per step: a loop keeps same-slot claims in order
            b = slots[i]
            self.hist[b, self.hist_count[b] % h] = (speaker[i], kind[i], target[i], value[i], rounds[i])
            self.hist_count[b] += 1

    def _append(self, rows: NDArray[np.int32]) -> None:
        need = self.log_size + rows.shape[0]
        if need > self._log.shape[0]:
            grown = np.zeros((max(need, 2 * self._log.shape[0]), self._log.shape[1]), dtype=np.int32)
            grown[: self.log_size] = self._log[: self.log_size]
            self._log = grown
        self._log[self.log_size: need] = rows
        self.log_size = need

    # ---- outputs ----
    @property
    def log(self) -> NDArray[np.int32]:
        """Every claim so far, ``(claims, len(LOG_COLUMNS))`` int32 (columns ``LOG_COLUMNS``), truth labels
        included: for logs and analysis, **not** for agents."""
        return self._log[: self.log_size]

    def records(self, slot: int | None = None, game: int | None = None) -> list[dict[str, Any]]:
        """The log as dicts (absolute seats, kind names, truth and lie labels), optionally one slot / game."""
        rows = self.log
        if slot is not None:
            rows = rows[rows[:, SLOT] == slot]
        if game is not None:
            rows = rows[rows[:, GAME] == game]
        out = []
        for r in rows.tolist():
            d = dict(zip(LOG_COLUMNS, r, strict=True))
            d["kind"] = KIND_NAMES[d["kind"]]
            d["truth"], d["known"] = bool(d["truth"]), bool(d["known"])
            d["lie"] = d["known"] and not d["truth"]
            out.append(d)
        return out

    def public_claim(self, row: dict[str, Any]) -> dict[str, Any]:
        """The public part of a logged claim (what ``infos`` and text views may show)."""
        return {k: row[k] for k in ("round", "speaker", "kind", "target", "value")}

    def encode(self, seats: NDArray[np.int64], rounds: NDArray[np.int64], current: NDArray[np.int64]
               ) -> NDArray[np.float32]:
        """``(slots, lay.size)`` float32 claims blocks for ``seats[b]`` (seat-relative; public claims only)."""
        lay = self.lay
        n, g, b = lay.num_players, lay.num_goals, self.num_slots
        seats = np.asarray(seats, dtype=np.int64)
        out = np.zeros((b, lay.size), dtype=np.float32)
        ar = np.arange(b)
        rel = (seats[:, None] + np.arange(n)[None, :]) % n  # offset -> absolute seat
        st = out[:, lay.slices["status"]]
        st[:, 0] = np.where(self.acting(current) == seats, self.pending, 0)
        st[:, 1] = self.window == seats
        st[:, 2] = self.window >= 0
        lg = self.latest_goal[ar[:, None], rel]  # (b, n, g)
        goals = np.zeros((b, n, g, 2), dtype=np.float32)
        goals[..., 0] = lg == 1
        goals[..., 1] = lg == 0
        out[:, lay.slices["goals"]] = goals.reshape(b, -1)
        if lay.roles:
            ls = self.latest_seat[ar[:, None, None], rel[:, :, None], rel[:, None, :]]  # (b, n, n)
            seat_block = np.stack([ls == ACCUSE, ls == CLEAR, ls == SUSPECT], axis=-1).astype(np.float32)
            out[:, lay.slices["seats"]] = seat_block.reshape(b, -1)
        if lay.history:
            hist = out[:, lay.slices["history"]].reshape(b, lay.history, lay.row_size)
            h = self.hist.shape[1]
            for j in range(min(lay.history, int(self.hist_count.max(initial=0)))):
                valid = self.hist_count > j
                idx = (self.hist_count - 1 - j) % h
                row = self.hist[ar, idx].astype(np.int64)  # (b, 5)
                v = np.flatnonzero(valid)
                if v.size == 0:
                    break
                sp = (row[v, 0] - seats[v]) % n
                kd = row[v, 1]
                hist[v, j, 0] = 1
                hist[v, j, 1 + sp] = 1
                hist[v, j, 1 + n + kd] = 1
                isg = kd == GOAL
                hist[v[isg], j, 5 + n + row[v[isg], 2]] = 1
                ns = v[~isg]
                hist[ns, j, 5 + n + g + (row[ns, 2] - seats[ns]) % n] = 1
                hist[v, j, -2] = row[v, 3]
                hist[v, j, -1] = row[v, 4] == np.asarray(rounds)[v]
        return out
