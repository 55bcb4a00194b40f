"""Per-variant leak hooks: ``RESAMPLERS[name](state, seat, rng)`` returns a state that agrees with everything ``seat``
may know and has everything else redrawn.

The conformance suite (``tests/test_conformance.py``) checks, for every registered variant, that the seat's
observation, its renderings, the spectator's rendering and (for the seat to act) the mask do not change under the
resampler, and that the resampler really changes hidden state. A registered variant without an entry here makes
that test fail: a new game must say what its hidden information is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from saboteur_env.base.cards import NUM_DECK_KINDS
from saboteur_env.base.observation import rebuild_history
from saboteur_env.base.state import EventType, GameState
from saboteur_env.duel import cards as dc
from saboteur_env.duel.state import DuelState
from saboteur_env.sab2 import cards as sc
from saboteur_env.sab2.state import Phase, Sab2State

__all__ = ["RESAMPLERS", "Resampler", "resample_base", "resample_duel", "resample_sab2"]

Resampler = Callable[[Any, int, np.random.Generator], Any]


def resample_base(state: GameState, seat: int, rng: np.random.Generator) -> GameState:
    """Base game (and any variant on its rules with another deck): other hands and the draw pile (one pool of unseen
    cards, redealt with the same hand sizes), other roles and the left-over role card, face-down goals ``seat`` has
    not peeked, later rounds' set-up, the gold deck order, other seats' nuggets, other seats' face-down discards."""
    s = state.clone()
    p = s.config.num_players
    others = [q for q in range(p) if q != seat]
    deck = s.round_decks[s.round]
    rest = deck[s.deck_pos :]
    pool = np.concatenate([np.repeat(np.arange(NUM_DECK_KINDS), s.hands[q]) for q in others] + [rest])
    rng.shuffle(pool)
    k = 0
    for q in others:
        size = int(s.hands[q].sum())
        s.hands[q] = np.bincount(pool[k : k + size], minlength=NUM_DECK_KINDS)
        k += size
    deck[s.deck_pos :] = pool[k:]
    role_pool = np.array([s.roles[q] for q in others] + [s.leftover_role])
    rng.shuffle(role_pool)
    s.roles[others] = role_pool[:-1]
    s.leftover_role = int(role_pool[-1])
    unknown = [g for g in range(3) if not s.goal_revealed[g] and not s.peeked[seat, g]]
    s.goal_kind[unknown] = rng.permutation(s.goal_kind[unknown])
    for r in range(s.round + 1, s.config.rounds):
        s.round_decks[r] = rng.permutation(s.round_decks[r])
        s.round_roles[r] = rng.permutation(s.round_roles[r])
        s.round_goals[r] = rng.permutation(s.round_goals[r])
    left = np.flatnonzero(s.gold_left)
    s.gold_deck[left] = rng.permutation(s.gold_deck[left])
    s.gold_nuggets[others] = rng.integers(0, 20, size=len(others))
    ev = s.events[: s.num_events]
    hidden = (ev[:, 0] == EventType.DISCARD) & (ev[:, 1] != seat)
    ev[hidden, 2] = rng.integers(0, NUM_DECK_KINDS, size=int(hidden.sum()))
    if hasattr(s, "hist_ring"):  # the reference state keeps a history ring; the core derives it
        rebuild_history(s)
    s.board_changed()
    return s


def resample_sab2(state: Sab2State, seat: int, rng: np.random.Generator) -> Sab2State:
    """Saboteur 2: other hands, the pile and the 10 cards set aside (same sizes); the roles of the other seats and
    the reserve (except roles ``seat`` has inspected, as long as they still hold them); unpeeked goals; later rounds.
    In the theft phase the round's roles are public and kept."""
    t = state.clone()
    p = state.config.num_players
    others = [i for i in range(p) if i != seat]
    deck = t.round_decks[t.round]
    pool = np.concatenate([np.repeat(np.arange(sc.NUM_DECK_KINDS), t.hands[i]) for i in others]
                          + [deck[t.deck_pos :], deck[: sc.REMOVED_PER_ROUND]]).astype(np.int16)  # fmt: skip
    pool = rng.permutation(pool)
    pos = 0
    for i in others:
        k = int(t.hands[i].sum())
        t.hands[i] = np.bincount(pool[pos : pos + k], minlength=sc.NUM_DECK_KINDS)
        pos += k
    rest = pool[pos:]
    deck = deck.copy()
    deck[: sc.REMOVED_PER_ROUND] = rest[: sc.REMOVED_PER_ROUND]
    deck[t.deck_pos :] = rest[sc.REMOVED_PER_ROUND :]
    t.round_decks[t.round] = deck
    known = {i for i in others if t.inspected[seat, i] >= 0 and not t.hats_swapped[i]}
    # In the theft phase the round's roles are revealed (public); only the reserve stays hidden.
    free = [] if t.phase == Phase.THEFT else [i for i in others if i not in known]
    unseen = [int(t.roles[i]) for i in free] + t.round_roles[t.round][t.reserve_pos :].tolist()
    unseen = rng.permutation(unseen)
    for j, i in enumerate(free):
        t.roles[i] = unseen[j]
    t.round_roles[t.round][t.reserve_pos :] = unseen[len(free) :]
    hidden = [g for g in range(3) if not t.goal_revealed[g] and not t.peeked[seat, g]]
    if len(hidden) >= 2:
        t.goal_kind[hidden] = rng.permutation(t.goal_kind[hidden])
    for r in range(t.round + 1, state.config.rounds):
        t.round_decks[r] = rng.permutation(t.round_decks[r])
        t.round_roles[r] = rng.permutation(t.round_roles[r])
    t.board_changed()
    return t


def resample_duel(state: DuelState, seat: int, rng: np.random.Generator) -> DuelState:
    """The Duel: the opponent's hand and the pile order (one pool), the goal cards ``seat`` has not seen (redrawn
    from the unseen ones and those still in the pool), later rounds' shuffles."""
    t = state.clone()
    opp = 1 - seat
    pool = np.concatenate([np.repeat(np.arange(dc.NUM_DECK_KINDS), t.hands[opp]), t.deck[t.deck_pos :]])
    pool = rng.permutation(pool)
    n = int(t.hands[opp].sum())
    t.hands[opp] = np.bincount(pool[:n], minlength=dc.NUM_DECK_KINDS)
    t.deck = np.concatenate([t.deck[: t.deck_pos], pool[n:]]).astype(np.int16)
    hidden_slots = [i for i in range(6) if not t.goal_revealed[i] and not t.peeked[seat, i]]
    free = [g for g in range(dc.NUM_GOALS) if not t.goal_out[g] and g not in t.goal_card.tolist()]
    choices = rng.permutation([int(t.goal_card[i]) for i in hidden_slots] + free)
    for i, slot in enumerate(hidden_slots):
        t.goal_card[slot] = choices[i]
    t.card_rank = rng.permutation(t.card_rank.T).T  # later rounds' shuffles
    t.goal_rank = rng.permutation(t.goal_rank.T).T
    t.board_changed()
    return t


RESAMPLERS: dict[str, Resampler] = {
    "base": resample_base,
    "sab2": resample_sab2,
    "duel": resample_duel,
    "base-lite": resample_base,  # tests/toy_variant.py: the base game's state with a smaller deck
}
