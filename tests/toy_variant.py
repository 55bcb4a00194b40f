"""A toy fourth game, registered by ``tests/conftest.py``: the base rules with a smaller deck.

It proves that a new game needs nothing outside its own module but one registry line: the base game's rules read
the deck from the variant (``BaseGame.deck_counts``), and every other fact (frame, hands, layouts, rendering,
``max_decisions_per_round``) follows from the base variant. ``tests/hidden.py`` holds its leak hook.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from saboteur_env.base.cards import DECK_COUNTS, KIND_MAP, KIND_ROCKFALL
from saboteur_env.variants import BaseGame

__all__ = ["LITE_DECK_COUNTS", "LiteVariant"]


def _lite_deck() -> NDArray[np.int16]:
    counts = DECK_COUNTS.copy()
    counts[[KIND_ROCKFALL, KIND_MAP]] = 0  # the 3 rockfall and 6 map cards leave the box
    counts.flags.writeable = False
    return counts


LITE_DECK_COUNTS: NDArray[np.int16] = _lite_deck()


class LiteVariant(BaseGame):
    """Saboteur without rockfall and map cards (58 cards a round)."""

    name = "base-lite"
    title = "Saboteur Lite (no rockfall, no maps)"
    rules_version = "base-lite-1"
    deck_counts = LITE_DECK_COUNTS
