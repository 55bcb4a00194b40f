"""Saboteur 2 (RULES.md §2) - work in progress (issue 4).

Done and tested: the card and role tables (``cards``: 112-card deck, 15 roles, oriented shapes with doors on
whole tunnels, ladders, crystals), connectivity with ladder links and the door-avoiding team routes (``board``, on
the shared arm engine ``saboteur_env.arms``), and the end-of-round rules (``scoring``: winners by the §2.8 door
table, the §2.9 payouts with the rulebook's worked example, the theft order and stealable gold).

Not yet playable: ``GameConfig(game="sab2")`` is rejected until the engine lands. The plan, following the Duel's
package layout (state / actions / rules / observation / view / render / positions):

* State: per round, set-up draws the 112-card order (the first 10 removed unseen), the 15-role order (first N dealt,
  the rest the reserve in draw order for Swap Your Hats) and the goals; per seat: hand counts (55 kinds), role,
  broken tools, Trapped!, Theft (with the decision index it was played at, for the theft order), gold total and
  stolen gold held, private inspection results (role seen per target).
* Turn options as decision sequences by the same seat (a ``phase`` field): ``discard k`` starts a pass, then
  ``discard k'`` or ``stop`` (at most 3); ``free t`` (a broken tool or Trapped!) starts option C, followed by
  exactly two ``discard`` decisions; after payouts a ``steal s`` decision per thief in §2.10 order (skipped when
  nobody has stealable gold). Masks allow only legal continuations.
* Actions: place (cell x orientation over 36 path kinds), break / repair / double repair (as the base game),
  rockfall (either rockfall card), map, theft, hands off, swap your hand, inspection, swap your hats, trapped!,
  free at last!, discard, stop, free, steal - targets seat-relative.
* Placement: base rules with ladders placed by adjacency + edge matching, never next to a goal (E19).
* Round end: gold revealed or cards exhausted; winners/payouts/theft from ``scoring``; next starter as §1.12.
"""
