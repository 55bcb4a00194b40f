"""A duel seat's structured view, decoded from its observation vector only (the one gate, as in the base game).

:class:`DuelView` is what the text/image renderers and the duel agents read. ``public_state()`` rebuilds the
public board as a :class:`DuelState` (hidden parts blank) so agents can ask the engine's board functions
(reachability, placement legality) about hypothetical moves without seeing anything hidden.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from saboteur_env.common.config import GameConfig
from saboteur_env.duel import board
from saboteur_env.duel import cards as dc
from saboteur_env.duel.observation import duel_observation_layout, encode_observation
from saboteur_env.duel.state import DuelEvent, DuelState

PLANE_NAMES = (
    [f"open_{e}" for e in "NESW"]
    + [f"join_{i}" for i in range(6)]
    + [f"reach_me_{e}" for e in "NESW"]
    + [f"reach_opp_{e}" for e in "NESW"]
    + [f"door_mine_{e}" for e in "NESW"]
    + [f"door_other_{e}" for e in "NESW"]
    + ["key", "troll", "bribed_me", "bribed_opp", "ladder_me", "ladder_opp", "nuggets"]
    + [f"gold_{e}" for e in "NESW"]
    + ["counter_me", "counter_opp", "start_me", "start_opp", "goal_facedown", "goal_revealed", "empty"]
)
PLANE = {name: i for i, name in enumerate(PLANE_NAMES)}


def _bits_of(planes: NDArray[np.float32], first: str, n: int = 4) -> NDArray[np.int64]:
    i = PLANE[first]
    out = np.zeros(planes.shape[1], dtype=np.int64)
    for e in range(n):
        out |= (planes[i + e] > 0.5).astype(np.int64) << e
    return out


def _shape_key(sid: int, me: int) -> tuple[int, ...]:
    opp = 1 - me
    return (int(dc.SHAPE_OPEN[sid]), int(dc.SHAPE_JOIN[sid]), int(dc.SHAPE_DOOR[me][sid]),
            int(dc.SHAPE_DOOR[opp][sid]), int(dc.SHAPE_TROLL[sid]),
            -1 if dc.SHAPE_LADDER[sid] < 0 else int(dc.SHAPE_LADDER[sid] != me), int(dc.SHAPE_GOLD_BITS[sid]),
            int(dc.SHAPE_NUGGETS[sid]))  # fmt: skip


def _shape_lookup() -> tuple[dict[tuple[int, ...], int], dict[tuple[int, ...], int]]:
    """Per colour: public features -> a shape id with those features (goals and path cards separately)."""
    out: list[dict[tuple[int, ...], int]] = []
    for me in (0, 1):
        table: dict[tuple[int, ...], int] = {}
        for sid, shape in enumerate(dc.SHAPES):
            if shape is None or shape.kind in dc.KIND_START:
                continue
            is_goal = shape.kind >= dc.FIRST_GOAL_KIND
            table.setdefault((*_shape_key(sid, me), int(is_goal)), sid)
        out.append(table)
    return out[0], out[1]


_LOOKUP = _shape_lookup()


@dataclass(frozen=True)
class DuelView:
    """Everything one duel seat knows (decoded from its observation)."""

    config: GameConfig
    seat: int
    planes: NDArray[np.float32]  # (44, HW)
    hand: NDArray[np.int64]
    my_peeks: NDArray[np.int64]  # (6,) goal card index per slot I peeked at, -1 otherwise
    peeked: NDArray[np.bool_]  # (2, 6) me / opp
    tools: NDArray[np.bool_]  # (2, 3) broken: me / opp
    hand_sizes: tuple[int, int]
    deck_size: int
    counters_left: int
    keys_left: int
    goals_in_pool: int
    nuggets: tuple[int, int]
    round: int
    my_turn: bool
    events: list[tuple[int, bool, int, int, float]]  # (type, actor is me, kind, cell, arg)

    @classmethod
    def from_observation(cls, obs: NDArray[np.float32], config: GameConfig, seat: int | None = None) -> DuelView:
        layout = duel_observation_layout(config)
        v = layout.split(obs)
        me = int(v["status"][1] > 0.5) if seat is None else seat
        peeks = v["my_peeks"]
        my_peeks = np.where(peeks.max(1) > 0.5, peeks.argmax(1), -1)
        events = []
        ntypes = len(DuelEvent)
        for row in v["history"]:
            if row[0] < 0.5:
                continue
            kind_part = row[2 + ntypes : 2 + ntypes + dc.NUM_KINDS]
            kind = int(kind_part.argmax()) if kind_part.max() > 0.5 else -1
            rc = row[-3:-1]
            cell = -1
            if rc.any() or int(row[1 : 1 + ntypes].argmax()) in (DuelEvent.PLACE, DuelEvent.ROCKFALL, DuelEvent.KEY,
                                                                 DuelEvent.BRIBE, DuelEvent.REVEAL, DuelEvent.SECURE):
                r = round(float(rc[0]) * max(1, config.rows - 1))
                c = round(float(rc[1]) * max(1, config.cols - 1))
                cell = r * config.cols + c
            events.append((int(row[1 : 1 + ntypes].argmax()), bool(row[1 + ntypes] > 0.5), kind, cell,
                           float(row[-1]) * 3))  # fmt: skip
        supply = v["supply"]
        return cls(
            config=config,
            seat=me,
            planes=v["board"].reshape(len(PLANE_NAMES), -1),
            hand=v["hand"].astype(np.int64),
            my_peeks=my_peeks,
            peeked=v["peeked"] > 0.5,
            tools=v["tools"] > 0.5,
            hand_sizes=(int(v["hand_sizes"][0]), int(v["hand_sizes"][1])),
            deck_size=int(supply[0]),
            counters_left=int(supply[1]),
            keys_left=int(supply[2]),
            goals_in_pool=int(supply[3]),
            nuggets=(int(v["nuggets"][0]), int(v["nuggets"][1])),
            round=int(v["round"].argmax()),
            my_turn=bool(v["status"][0] > 0.5),
            events=events,
        )

    def plane(self, name: str) -> NDArray[np.float32]:
        return self.planes[PLANE[name]]

    def public_state(self) -> DuelState:
        """The public board as an engine state (absolute seats; hands, deck and unpeeked goals left blank)."""
        cfg = self.config
        geo = board.geometry(cfg)
        me, opp = self.seat, 1 - self.seat
        hw = cfg.num_cells
        shape = np.full(hw, -1, dtype=np.int16)
        open_bits = _bits_of(self.planes, "open_N")
        join = _bits_of(self.planes, "join_0", 6)
        door_me = _bits_of(self.planes, "door_mine_N")
        door_other = _bits_of(self.planes, "door_other_N")
        gold = _bits_of(self.planes, "gold_N")
        troll = self.plane("troll") > 0.5
        ladder_me, ladder_opp = self.plane("ladder_me") > 0.5, self.plane("ladder_opp") > 0.5
        nuggets = np.rint(self.plane("nuggets") * 3).astype(np.int64)
        revealed = self.plane("goal_revealed") > 0.5
        lookup = _LOOKUP[me]
        for cell in np.flatnonzero(open_bits).tolist():
            if cell in geo.start_cells:
                continue
            ladder = 0 if ladder_me[cell] else 1 if ladder_opp[cell] else -1
            key = (int(open_bits[cell]), int(join[cell]), int(door_me[cell]), int(door_other[cell]), int(troll[cell]),
                   ladder, int(gold[cell]), int(nuggets[cell]), int(revealed[cell]))  # fmt: skip
            shape[cell] = lookup[key]
        for colour, cell in enumerate(geo.start_cells):
            shape[cell] = dc.shape_id(dc.KIND_START[colour], 0)
        counter = np.full(hw, -1, dtype=np.int8)
        counter[(self.plane("counter_me") > 0.5) | (self.plane("bribed_me") > 0.5)] = me
        counter[(self.plane("counter_opp") > 0.5) | (self.plane("bribed_opp") > 0.5)] = opp
        peeked = np.zeros((2, dc.GOALS_PER_ROUND), dtype=bool)
        peeked[me], peeked[opp] = self.peeked[0], self.peeked[1]
        hands = np.zeros((2, dc.NUM_DECK_KINDS), dtype=np.int16)
        hands[me] = self.hand
        broken = np.zeros((2, 3), dtype=bool)
        broken[me], broken[opp] = self.tools[0], self.tools[1]
        s = DuelState(
            config=cfg,
            card_rank=np.zeros((cfg.rounds, dc.DECK_SIZE), np.int16),
            goal_rank=np.zeros((cfg.rounds, dc.NUM_GOALS), np.int16),
            card_out=np.zeros(dc.DECK_SIZE, dtype=bool),
            goal_out=np.zeros(dc.NUM_GOALS, dtype=bool),
            round=self.round,
            last_rewards=np.zeros(2),
            deck=np.zeros(0, dtype=np.int16),
            hands=hands,
            broken=broken,
            discards=np.zeros(dc.NUM_DECK_KINDS, dtype=np.int16),
            cell_shape=shape,
            cell_counter=counter,
            cell_key=self.plane("key") > 0.5,
            goal_card=np.array(self.my_peeks, dtype=np.int16),
            goal_revealed=np.array([revealed[c] for c in geo.goal_cells]),
            peeked=peeked,
            reach=np.zeros((2, hw), dtype=np.uint8),  # set by refresh_reach below
            counters_left=self.counters_left,
            keys_left=self.keys_left,
            current=me,
        )
        board.refresh_reach(s)
        return s


def duel_view(state: DuelState, seat: int) -> DuelView:
    """The structured view of ``seat`` (built through the observation, so it cannot hold more)."""
    return DuelView.from_observation(encode_observation(state, seat), state.config, seat)
