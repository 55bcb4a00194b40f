"""One network for every player count of a game (and both Duel geometries): the universal input and action layout.

A game's observation and action ids depend on its configuration: the base game's per-seat rows, seat one-hots and
tool targets grow with the player count (2,506 observation entries and 1,281 actions at 3 players, 2,814 and
1,365 at 10), Saboteur 2's likewise (2 to 12 players), and the Duel's board with its geometry (5 x 9 or 5 x 10).
:class:`UniversalLayout` lines every *variant* (a legal player count, or a Duel geometry) up inside the largest
one, so that one network reads them all:

* **observation**: each variant's vector is scattered into the largest variant's layout. Blocks of equal shape map
  one to one; an axis that is shorter in the variant (seat rows and seat one-hots: offset ``k`` is the ``k``-th seat
  clockwise in every count; the Duel's board columns) keeps its indices and leaves the rest zero. Blocks whose rows
  mix seat-sized one-hots with fixed fields declare their parts in the layout (``row_parts``: the event history,
  Saboteur 2's status row); each part is lined up the same way. A one-hot of the variant follows (the player count
  or the geometry), so the network knows which game it is in.
* **belief features** (a file whose header names ``features``, the base game's ``bayes``: per-seat P(saboteur) of
  the seat's own and of a public model, P(gold) per goal slot, the tile distances; ``agents.base.belief_features``)
  follow the universal observation, lined up like the seat rows: offset ``k`` is the ``k``-th seat in every count
  and the largest count's other offsets stay zero.
* **actions**: by name (:func:`saboteur_env.action_to_string`): ``break pickaxe seat+2`` or ``place T05 at (2,3)``
  is the same universal id in every variant; the universal ids are the union of all variants' names, the largest
  variant's first.

A network trained on universal vectors is evaluated at a given count without any per-move cost: its first layer's
rows and its heads' columns are gathered once for that count (:meth:`agents.learned.NumpyPolicy.specialize`), and
the variant one-hot folds into the first layer's bias.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from saboteur_env import GameConfig, action_to_string, num_actions, observation_layout

# The variants of each game: player counts (base, Saboteur 2) or Duel geometries. The first is the largest.
PLAYER_COUNTS = {"base": tuple(range(3, 11)), "sab2": tuple(range(2, 13))}
DUEL_LAYOUTS = ("official_5x10", "seed_5x9")
GAMES = ("base", "sab2", "duel")


def variant_configs(game: str) -> list[GameConfig]:
    """Every variant of ``game``, the largest (the universal layout's frame) first."""
    if game == "duel":
        return [GameConfig(game="duel", num_players=2, duel_layout=lay) for lay in DUEL_LAYOUTS]
    if game not in PLAYER_COUNTS:
        raise ValueError(f"game {game!r} is unknown; valid: {', '.join(GAMES)}")
    return [GameConfig(game=game, num_players=n) for n in sorted(PLAYER_COUNTS[game], reverse=True)]


def variant_name(config: GameConfig) -> str:
    """``"5"`` (players) or the Duel geometry's name."""
    return str(config.duel_layout) if config.game == "duel" else str(config.num_players)


def _embed(small: tuple[int, ...], big: tuple[int, ...], what: str) -> NDArray[np.int64]:
    """Flat indices, in ``big``'s C order, of every element of an array of shape ``small`` placed at the origin."""
    if len(small) != len(big) or any(s > b for s, b in zip(small, big, strict=True)):
        raise ValueError(f"{what}: shape {small} does not fit inside {big}")
    grids = np.meshgrid(*[np.arange(s) for s in small], indexing="ij")
    return np.ravel_multi_index([g.ravel() for g in grids], big).astype(np.int64)


def _block_index(name: str, small: Any, big: Any) -> NDArray[np.int64]:
    """Where each entry of block ``name`` of layout ``small`` goes inside the same block of layout ``big``
    (indices relative to the block's start in ``big``)."""
    s_shape, b_shape = tuple(small.shapes[name]), tuple(big.shapes[name])
    s_parts, b_parts = small.row_parts.get(name), big.row_parts.get(name)
    if s_parts is None:
        return _embed(s_shape, b_shape, name)
    if sum(s_parts) != s_shape[-1] or sum(b_parts) != b_shape[-1] or len(s_parts) != len(b_parts):
        raise ValueError(f"{name}: row parts {s_parts} / {b_parts} do not add up to rows of {s_shape} / {b_shape}")
    # each part keeps its indices inside the bigger part (the seat one-hots' offsets stay the same)
    col = np.concatenate([b0 + np.arange(sp) for sp, bp, b0 in zip(s_parts, b_parts, np.cumsum((0, *b_parts[:-1])),
                                                                    strict=True) if sp <= bp])  # fmt: skip
    if col.size != s_shape[-1]:
        raise ValueError(f"{name}: a row part of {s_parts} is larger than its counterpart in {b_parts}")
    rows = _embed(s_shape[:-1], b_shape[:-1], name) if len(s_shape) > 1 else np.zeros(1, dtype=np.int64)
    return (rows[:, None] * b_shape[-1] + col[None, :]).ravel()


@dataclass(frozen=True)
class VariantMap:
    """One variant's place in the universal layout."""

    config: GameConfig
    obs_index: NDArray[np.int64]  # universal position of each of the variant's observation entries
    action_index: NDArray[np.int64]  # universal id of each of the variant's action ids
    flag: int  # universal position of the variant's one-hot entry


class UniversalLayout:
    """The universal observation and action layout of one game (module docstring)."""

    def __init__(self, game: str) -> None:
        configs = variant_configs(game)
        self.game = game
        frame = observation_layout(configs[0])
        self.frame_config = configs[0]
        self.names = [variant_name(c) for c in configs]
        self.obs_size = int(frame.size) + len(configs)  # the frame's entries, then the variant one-hot
        high = np.ones(self.obs_size, dtype=np.float32)
        names: dict[str, int] = {}
        self.variants: dict[str, VariantMap] = {}
        for i, c in enumerate(configs):
            lay = observation_layout(c)
            if list(lay.shapes) != list(frame.shapes):
                raise ValueError(f"{game}: blocks {list(lay.shapes)} differ from the frame's {list(frame.shapes)}")
            idx = np.concatenate([frame.slices[b].start + _block_index(b, lay, frame) for b in lay.shapes])
            if idx.size != lay.size or np.unique(idx).size != idx.size:
                raise ValueError(f"{game} {variant_name(c)}: the observation does not map one to one")
            high[idx] = np.maximum(high[idx], np.asarray(lay.high, dtype=np.float32))
            acts = np.empty(num_actions(c), dtype=np.int64)
            for a in range(acts.size):
                acts[a] = names.setdefault(action_to_string(c, a), len(names))
            self.variants[variant_name(c)] = VariantMap(c, idx, acts, int(frame.size) + i)
        self.high = high
        self.num_actions = len(names)
        self.action_names = list(names)
        role = frame.slices.get("role")
        self.role_slice: slice | None = role if isinstance(role, slice) else None

    def variant(self, config: GameConfig) -> VariantMap:
        """The map of ``config``'s variant; a ``ValueError`` naming the valid ones for another layout or count."""
        if config.game != self.game:
            raise ValueError(f"a universal {self.game!r} network cannot play game {config.game!r}")
        m = self.variants.get(variant_name(config))
        frame = m.config if m is not None else None
        fields = ("num_players", "margin", "history_length", "duel_layout")
        same = frame is not None and all(getattr(config, f) == getattr(frame, f) for f in fields)
        if not same:
            raise ValueError(f"a universal {self.game!r} network plays {', '.join(self.names)} "
                             f"({'geometries' if self.game == 'duel' else 'players'}) with the default margin and "
                             f"history; got {config}")  # fmt: skip
        return m  # type: ignore[return-value]

    def feature_size(self, name: str) -> int:
        """Universal belief features of set ``name`` ("" = none: 0): the largest variant's."""
        from agents.base.belief_features import feature_size

        return feature_size(name, self.frame_config) if name else 0

    def feature_index(self, config: GameConfig, name: str) -> NDArray[np.int64]:
        """Where each of ``config``'s belief features of set ``name`` goes in the universal feature block: the seat
        blocks (own P(saboteur), public P(saboteur)) by seat offset, the per-goal entries as they are."""
        from agents.base.belief_features import feature_size

        self.variant(config)
        if not name:
            return np.zeros(0, dtype=np.int64)
        n, big = config.num_players, self.frame_config.num_players
        size = feature_size(name, config)  # ValueError for an unknown set or another game
        idx = np.concatenate([np.arange(n), big + np.arange(n), 2 * big + np.arange(size - 2 * n)])
        return idx.astype(np.int64)

    def observations(self, config: GameConfig, obs: NDArray[np.floating[Any]]) -> NDArray[np.float32]:
        """Variant observations (rows) as universal vectors."""
        m = self.variant(config)
        x = np.atleast_2d(np.asarray(obs, dtype=np.float32))
        out = np.zeros((x.shape[0], self.obs_size), dtype=np.float32)
        out[:, m.obs_index] = x
        out[:, m.flag] = 1.0
        return out


_LAYOUTS: dict[str, UniversalLayout] = {}


def universal_layout(game: str) -> UniversalLayout:
    """The (cached) universal layout of ``game``."""
    if game not in _LAYOUTS:
        _LAYOUTS[game] = UniversalLayout(game)
    return _LAYOUTS[game]


__all__ = ["DUEL_LAYOUTS", "PLAYER_COUNTS", "UniversalLayout", "VariantMap", "universal_layout", "variant_configs",
           "variant_name"]  # fmt: skip
