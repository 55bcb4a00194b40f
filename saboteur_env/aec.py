"""Saboteur (base game), Saboteur 2 (``game="sab2"``) and Saboteur: The Duel (``game="duel"``) as a PettingZoo
AEC environment.

Environment card
================

===================  =======================================================================================
Import               ``from saboteur_env import env, raw_env`` (or ``pettingzoo.make("aec", "saboteur/saboteur-v0")``)
Actions              Discrete, ``num_actions(config)`` (1293 for 4 players, margin 0); identical for every seat
Parallel API         no (turn-based; ``turn_based_aec_to_parallel`` works)
Agents               ``player_0`` ... ``player_{N-1}``: N = 3..10 base, 2..12 sab2, 2 duel (blue, green)
Observation          ``Dict(observation=Box(float32, (D,)), action_mask=Box(int8, (A,)))``
Observation values   non-negative counts, one-hots and 0..1 coordinates (bounds in the space)
Rewards              nuggets won at each round end (``reward="gold"``) or +1/-1 per round (``reward="win"``)
Episode              one game: ``rounds`` rounds (default 3); at most ``config.max_game_length`` decisions
                     (per round: 67 base, 208 sab2, 146 duel)
===================  =======================================================================================

Rules: ``docs/rules.md`` §0, §1, §4 (base game, 3-10 players). One decision = one card played or discarded by the seat
to act; a seat with an empty hand is skipped automatically. Rounds follow each other inside one episode.

Observation
-----------
Seat-relative (offset 0 = the observing seat). The layout (``saboteur_env.base.observation``) has named slices:
``board`` (26 planes over the playable cells: open edges, arms connected to the start, tunnel pairs, dead-end
stubs, start, placed path cards, face-down/revealed goals, empty cells, and the goals *I* peeked with their
content), ``role``, ``hand`` (counts per card kind), ``seats`` (per seat offset: broken tools, hand size, gold
cards won, maps used on each goal, role revealed last round, face-down discards this round), ``deck_size``,
``gold_deck_size``, ``round``, ``to_act``, ``my_nuggets``, ``event_count`` and ``history`` (the last
``history_length`` public events: actor, card kind, target, cell, argument). ``ObservationLayout.split(obs)``
gives named views; ``PlayerView.from_observation(obs, config)`` gives a structured view (what heuristic agents
read).

Private information appears only in the owner's observation: own role, own hand, own map results, own face-down
discards, own nuggets. Hidden from everyone: the draw pile, unpeeked goals, the left-over role card.

Action Mask
-----------
``obs["action_mask"]`` is an int8 vector over all actions; it is all zeros for every agent but the one to act.
The engine's mask and its transition share one legality predicate.

Action Space
------------
Indexed by **card kind** (never by hand slot) with seat-relative targets; see ``saboteur_env.base.actions``:

=================  ===============  ============================================================================
segment            size             meaning
=================  ===============  ============================================================================
``place``          ``HW * 26``      place path kind/rotation at a cell: ``cell * 26 + orientation``
``break``          ``3 P``          broken pickaxe / lantern / cart on a seat offset (yourself included)
``repair``         ``3 P``          repair pickaxe / lantern / cart on a seat offset
``double_repair``  ``6 P``          double repair card (3) x tool chosen (2) x seat offset
``rockfall``       ``HW``           remove the path card at a cell
``map``            ``3``            peek at goal slot 0/1/2 (top, middle, bottom)
``discard``        ``27``           pass, discarding one card of a kind face down
=================  ===============  ============================================================================

``action_to_string``, ``decode_action`` and ``encode_action`` (``saboteur_env``) convert ids.
``raw_env.step`` raises ``IllegalActionError`` (a ``ValueError``) for an illegal id, naming the move and the
reason, and leaves the game unchanged. ``env()`` wraps it in PettingZoo's ``TerminateIllegalWrapper`` (an illegal
move ends the game with -1 for the offender), ``AssertOutOfBoundsWrapper`` and ``OrderEnforcingWrapper``.

Rewards
-------
``reward="gold"`` (default): at each round end every seat receives the nuggets it won that round (gold-digger
picks when the gold is found, saboteur payouts otherwise); the sum over the game is the seat's final score.
``reward="win"``: +1 to every seat of the winning team and -1 to the others at each round end. All other steps
give 0. Rewards are delivered to every seat at the step that ends the round.

Termination
-----------
At each round end every agent's ``infos`` hold ``round_result``: the public outcome (winner, finder, last player,
everyone's role and number of gold cards won) and ``my_nuggets`` (the nugget values are private until the game
ends). All agents terminate after the last round (the ``infos`` then hold ``final_ranking`` and ``nuggets``).
``env.rewards`` is keyed by agent as PettingZoo requires: a policy must only read its own entry.
There is no truncation: every decision removes a card from a hand, so a round has at most 67 decisions.
After termination each agent must be stepped with ``None`` (PettingZoo dead steps); any other action raises.

Single-seat Gymnasium view
--------------------------
``SingleSeatEnv(opponents=None, learner_seats=None, illegal_reward=None, opponent_secret=None, **config)`` seats a
learner in one seat and lets agents play the others; ``step`` returns at the learner's next decision with all the reward
its seat earned meanwhile, and ``action_masks()`` serves MaskablePPO. ``reset(seed=s)`` fixes the deal and the learner's
seat; the opponents' seeds are sealed (``saboteur_env.common.seeding``): spawned from ``opponent_secret`` (default 128
bits from ``os.urandom`` per env) and the deal, never from ``s``, so an opponent's seed says nothing about the deal. The
same ``opponent_secret`` and ``seed`` give the same episode. ``SingleSeatEnv.for_sb3(**config)`` is the one
Stable-Baselines3's ``check_env`` passes (``illegal_reward=-1.0``: a sampled illegal action ends the episode).
``LearnerVectorEnv`` (``saboteur_env.learner``) is the batched version: a real ``gymnasium.vector.VectorEnv``.

Saboteur 2 (``game="sab2"``)
----------------------------
``env(game="sab2", num_players=2..12)``: docs/rules.md §2 with the §4.3 decisions on the same engine interface
(``saboteur_env.sab2``): the base cards plus the 24 modelled expansion path cards (bridges, double curves, ladders
joined to the start, blue/green doors, crystals) and 21 expansion action cards, 15 role cards (one dealt each, the
rest a hidden reserve), 10 cards set aside unseen each round, 6-card hands, the §2.8 door winner table, §2.9
payouts (Boss -1, Profiteer -2, geologists share the crystals, trapped players get nothing) and §2.10 thefts.

* A turn can take several decisions by the same agent (the observation's ``status`` gives the phase): **pass** =
  ``discard`` a kind, then ``discard`` another or ``stop`` (at most three, then the draws); **option C** = ``free``
  (a broken tool or Trapped!), then exactly two ``discard`` decisions; after the payouts every thief in §2.10 order
  makes one ``steal`` decision (skipped when nobody has stealable gold). Masks allow only legal continuations.
  Actions (``saboteur_env.sab2.actions``): place, break / repair / double repair (seat-relative targets), rockfall
  (base or expansion card), map, theft, hands off, swap your hand, inspection, swap your hats, trapped!, free at
  last!, discard, stop, free, steal.
* Observation (``saboteur_env.sab2.observation``): 31 board planes (arms, connected arms, tunnels, doors by colour,
  ladders, crystals, goals, own peeks), own role (after any hat swap), hand, a row per seat (tools, Trapped!,
  Theft, hand size, gold, hats swapped, maps, discards, inspections), own inspection results, last round's roles,
  who inspected whom, pile / reserve / thieves, round, seat to act, phase, recent public events. Gold totals are
  public; inspection results and a swapped role are private.
* Rewards: ``"gold"``: gold paid plus gold stolen minus gold lost, at each round end (after the thefts); ``"win"``:
  +1 to each winner and -1 to everyone else at each round end (geologists are never winners). ``round_result``
  infos are public (roles are revealed at a round end).
* Agents: ``random``, ``greedy`` (role-blind digger) and the role-dispatching ``heuristic`` (``agents.sab2``; every
  role-dispatching ladder name plays it); ``python -m experiments.tournament --game sab2 --players 6 12 --agents
  heuristic random`` prints win rates and gold per role.

Saboteur: The Duel (``game="duel"``)
------------------------------------
``env(game="duel", duel_layout="seed_5x9" | "official_5x10")``: docs/rules.md §3 with the §4.4 decisions, two players,
same engine and environment class (``saboteur_env.duel``: card tables on the shared card model, per-player arm
reachability with doors, keys, trolls and ladders, automatic gold securing, troll payments, 3 rounds).

* Observation: ``saboteur_env.duel.observation`` (44 board planes - arms, tunnels, what each player reaches,
  doors by colour, keys, trolls and bribes, ladders, gold and counters, starts, goals - then hand, own map results,
  who peeked where, tools, hand sizes, draw pile / counters / keys / goals left in the pool, both score piles,
  round, whose turn and own colour, and the last ``history_length`` public events). Seat-relative; private: own
  hand, own map results (the goal card seen). ``saboteur_env.duel.view.DuelView`` decodes it.
* Actions: one flat id per complete turn (5,701 for the 5x9 layout; ``saboteur_env.duel.actions``): place
  (cell x 48 orientations), place a troll and bribe it at once, break (opponent), repair (self), double repair
  (X, Y or both), rockfall, map, key, repair by discarding a pair of kinds (option C), pass discarding one kind, a
  pair of kinds or nothing (empty hand only), bribe a troll (option E, no card, no draw). A choice of two cards
  is one id over unordered kind pairs (780), so no turn needs several decisions.
* Rewards: ``"gold"``: at each round end, the nuggets a seat scored minus its troll payments; ``"win"``:
  +1 / -1 / 0 at the end of the game. ``round_result`` infos are public (score piles are public).
* Agents: ``random`` and ``greedy`` (``agents.duel.ladder.DuelGreedyAgent``); ``python -m experiments.tournament
  --game duel --agents greedy random`` plays both colours on the same seeds and prints win/draw/loss with CIs.

Claims (``claims=True``)
------------------------
The optional claims rule (docs/rules.md §7, docs/claims.md, ``saboteur_env.claims``): free public statements ("goal
g is gold / stone", and where there are roles "seat +t is / is not a saboteur", "I suspect seat +t") whose ids
follow the game's (``Discrete(A + C)``), with the claims block appended at the end of the observation (the game's
slices unchanged). At most ``claims_per_turn`` claims before each own decision; after a map (or a Saboteur 2
inspection) ``agent_selection`` stays with the actor for a report window (claims or ``done``). A claim never
changes the game (``env.game`` is the game without claims), gives reward 0 and puts the public claim in every
agent's ``infos["claim"]``; ``claims_log()`` holds each claim with its truth labels (``truth``, ``known``,
``lie``), like ``state()`` not for agents. ``SingleSeatEnv(claims=True)``: the learner's actions include claims
and the opponents (agents of the claims config, e.g. ``agents.claims.make_claims_agent``) make their own.

State
-----
``state()`` returns the full state vector (hidden roles, hands, goals, deck contents) for centralised critics.
It is **not** for agents. ``clone_game()`` gives an independent copy of the engine state; ``copy.deepcopy`` and
``pickle`` keep the mid-game state (no ``EzPickle``).

Version History
---------------
* v0: initial release - base game, 3-10 players, 3 rounds, gold or win rewards; ``ansi``, ``human`` and
  ``rgb_array`` rendering (saboteur-env 0.1.0).
* v0, saboteur-env 0.2.0: ``game="duel"`` (Saboteur: The Duel, two layouts) and ``game="sab2"`` (Saboteur 2,
  2-12 players) added; ``SingleSeatEnv`` gains an optional ``shaping`` potential. Base-game behaviour, spaces and
  seeds are unchanged.
* v0, saboteur-env 0.3.0: the games are peers behind one ``Variant`` protocol and a registry
  (``saboteur_env.variants``; ``register()`` adds a game of your own). Game behaviour, spaces, observations and
  seeds are unchanged (golden replays byte for byte). Breaking, for code that imported modules directly: this
  module moved from ``saboteur_env.env`` to ``saboteur_env.aec`` (``saboteur_env.env(...)`` and
  ``saboteur_env.raw_env`` are unchanged; PettingZoo's entry point is ``saboteur_env.aec:env``); the base game's
  modules moved to ``saboteur_env.base`` (``saboteur_env.base.board``, ``.positions``, ``.rules``, ...); shared
  pieces to ``saboteur_env.common`` (``config``, ``errors``, ``geometry``, ``arms``, ``cards`` for the card model);
  ``DUEL_LAYOUTS`` to ``saboteur_env.duel.variant``; ``ActionError`` to the package (``saboteur_env.ActionError``).
  Fixes: infos are fresh per-seat copies (an agent editing its info changed other seats' observations in
  Saboteur 2); ``reset(options={"game": s})`` validates the state (``StateError``); ``render_viewer=True`` and
  unhashable ``game``/``duel_layout`` values are ``ConfigError``; 0-d integer arrays are accepted as actions;
  bad seats raise ``SeatError``; an illegal Saboteur 2 Theft id is an ``IllegalActionError``;
  ``max_game_length`` is a true bound for every game (Saboteur 2: 624, was 201); ``player_view`` works for
  Saboteur 2 (``saboteur_env.sab2.view.Sab2View``).
* v0, saboteur-env 0.3.0, rules versions base-2 / sab2-2 / duel-2 (behaviour change, following the customer's seed
  documents; docs/rules.md): a revealed stone goal opens towards the card just placed first (then most reaching
  cards, fewest mismatches, the Duel's gold preference, 0°); new option ``rules="seeds"`` (default) /
  ``"official"``: in Saboteur 2 every team with a passable route to the gold wins (official: the finder's team
  first) and a ladder may go where it connects or next to a ladder or the start card (official: next to any maze
  card). Logs and golden files record ``config.rules_version`` (e.g. ``"sab2-2/seeds"``). Spaces are unchanged.
  Also: ``GameConfig.rules`` (Saboteur 2 only) changes ``repr(config)`` and so Saboteur 2 and Duel fingerprints;
  removed config constants (``GAMES``, ``PLAYERS_BY_GAME``, ``DEFAULT_PLAYERS``, ``FRAME_ROWS``/``FRAME_COLS``,
  ``START_CELL``, ``GOAL_CELLS``: ask the variant); ``DUEL_LAYOUTS`` values are ``Frame`` objects; Saboteur 2
  thieves see the round's revealed roles; Saboteur 2 ``reward_range`` bounds a whole game. CHANGELOG.md lists all.
* v0, saboteur-env 0.3.0 (unreleased): the base game runs on the compiled core (``saboteur_env.core``); games,
  observations, masks, rewards and fingerprints are unchanged (equivalence tests against the numpy engine, golden
  replays byte for byte); ``env.game`` is a ``CoreGameState`` and ``reset(options={"game": s})`` also accepts
  the numpy engine's ``GameState``. ``saboteur_env.vector.VectorEnv`` steps batches of any of the three games.
* v0, saboteur-env 0.3.0 (unreleased): new option ``claims=True`` (``claims_per_turn``; docs/claims.md): claims as
  cheap talk, a layer over the unchanged game. Without it everything is unchanged (spaces, observations, masks,
  fingerprints, config hashes, golden replays).
* v0, saboteur-env 0.3.0 (unreleased): ``SingleSeatEnv(claims=True)`` works (it refused before): the learner's
  actions include claims, the opponents make their own; ``VectorEnv(claims=True, num_threads=K)`` steps the games in
  K threads (identical results; before, claims ignored ``num_threads``).
* v0, saboteur-env 0.3.0 (unreleased): the numpy engines' rules modules moved to the internal
  ``saboteur_env.<game>.reference`` (the test oracle; nothing a user runs plays them). Breaking, for code that imported
  them: ``saboteur_env.{base,sab2,duel}.rules`` are gone; use the engine API (``saboteur_env.new_game``, ...);
  ``reward_range`` / ``final_ranking`` / ``card_conservation`` are in ``<game>.scoring``, Saboteur 2's
  ``action_layout`` in ``saboteur_env.sab2.actions``; subclass ``saboteur_env.variants.BaseGame`` (``Sab2Game``,
  ``DuelGame``) for a game on the same rules. Games, spaces and observations are unchanged.
* v0, saboteur-env 0.3.0 (unreleased): ``VectorEnv(copy=False)`` returns read-only views (its step now rewrites only
  what changed in its observation and mask rows); the base game's core state has two more fields (``obs_cells``,
  ``mask_cells``), so self-play checkpoints of earlier versions are refused with a clear error. Games, spaces and
  observations are unchanged.
* v0, saboteur-env 0.3.0 (unreleased): Saboteur 2's lock-step float observation rows are incremental too (the
  board planes of changed cells and the history entries; its core state has one more field, ``obs_cells``, so
  Saboteur 2 self-play checkpoints of earlier versions are refused with a clear error); the Duel's mask tests every
  orientation of a cell at once. Games, spaces and observations are unchanged.
* v0, saboteur-env 0.3.0 (unreleased): the lock-step keeps each mask row's legal actions as a sorted list (core
  state field ``mask_list`` in all three games; it replaces the base game's ``mask_cells``), clears only those and
  samples from the list (``LegalSampler``: the same actions for the same seeds), so self-play checkpoints and pickled
  core states of earlier versions are refused with a clear error; kernel caches are stamped with the package's
  digest; ``python -m saboteur_env.warmup`` compiles the games ahead of use. Games, spaces, observations and masks
  are unchanged.
* v0, saboteur-env 0.3.0 (unreleased): the base game's core state field ``obs_cells`` no longer records the float
  history rows (the lock-step rewrites them every decision), so base self-play checkpoints and pickled base core
  states of earlier versions are refused with a clear error; ``VectorEnv`` binds its lock-step kernel call once
  (``VectorEnv.batch`` is read-only). Games, spaces, observations and masks are unchanged.
* v0, saboteur-env 0.3.0 (unreleased): ``SingleSeatEnv``'s opponents' seeds are sealed: spawned from a new
  ``opponent_secret`` (default: 128 bits from ``os.urandom`` per env) and the deal, no longer drawn from the
  generator that draws the deal (an opponent could recover the deal from its seed). ``reset(seed=s)`` deals the same
  game and seat as before; the opponents' moves repeat for the same ``opponent_secret``; later unseeded episodes deal
  differently than before (the generator no longer draws the opponents' seeds).
* v0, saboteur-env 0.3.0 (unreleased): ``raw_env(obs_format="flat")`` (one ``Box``; the mask in
  ``infos[agent]["action_mask"]`` and ``action_mask(agent)``; the default ``"dict"`` is unchanged);
  ``SingleSeatEnv()`` needs no argument (random legal opponents) and ``SingleSeatEnv.for_sb3(**config)`` passes SB3's
  ``check_env``; ``env()`` refuses float, str and bool actions with an ``ActionError`` (an ``AssertionError`` or a
  numpy error before). New: ``saboteur_env.learner.LearnerVectorEnv`` (a ``gymnasium.vector.VectorEnv`` of one
  learner seat per game), ``saboteur_env.transitions.SeatTransitions``, ``VectorEnv.step_where`` and
  ``saboteur_env.puffer.SaboteurPuffer`` (docs/integrations.md). Games, spaces, observations and masks of the
  existing formats are unchanged.
* v0, saboteur-env 0.3.0 (unreleased): modules moved (issue 39): the kernels, one-game states, converters and
  reference engines into each game's package (``saboteur_env.<game>.kernels`` / ``compiled`` / ``convert`` /
  ``reference``); the ``Variant`` protocol and the registry's storage into ``saboteur_env.common.config`` (the
  modules ``saboteur_env.variant`` and ``saboteur_env.common.registry`` are gone; ``saboteur_env.Variant`` stays);
  ``SingleSeatEnv`` into ``saboteur_env.single_seat`` (``saboteur_env.SingleSeatEnv`` stays). Games, spaces,
  observations and masks are unchanged.
"""

from __future__ import annotations

import warnings
from typing import Any, ClassVar

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from saboteur_env import api, claims
from saboteur_env.common.config import GameConfig
from saboteur_env.common.errors import ConfigError, GameOverError, IllegalActionError, check_action_id

OBS_FORMATS = ("dict", "flat")


def env(**kwargs: Any) -> AECEnv:
    """The environment wrapped in PettingZoo's standard wrappers (illegal move: -1 and the game ends)."""
    e: AECEnv = raw_env(**kwargs)
    e = wrappers.TerminateIllegalWrapper(e, illegal_reward=-1)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    e = _ActionIds(e)
    e = wrappers.OrderEnforcingWrapper(e)
    return e


class _ActionIds(wrappers.BaseWrapper):
    """Action ids checked by raw_env's rule (errors.as_int) before PettingZoo's assertion sees them: a float, string
    or bool is an ActionError naming the value and the range, not an AssertionError or a numpy truth-value error."""

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if not (action is None and (self.terminations[agent] or self.truncations[agent])):  # a dead agent's step
            action = check_action_id(action, int(self.action_space(agent).n))
        super().step(action)


class raw_env(AECEnv):  # noqa: N801 - PettingZoo naming convention
    """Saboteur AEC environment; keyword arguments are the fields of :class:`GameConfig` plus rendering options.

    Args:
        render_mode: ``None``, ``"ansi"`` (``render()`` returns a string), ``"human"`` (prints it) or
            ``"rgb_array"`` (an ``(H, W, 3)`` uint8 image of the board, tools, hand sizes and the seat to act).
        render_viewer: whose perspective ``render()`` draws: a seat index, ``None`` (public information only)
            or ``"omniscient"`` (everything, for debugging).
        obs_format: ``"dict"`` (default): ``{"observation": Box, "action_mask": Box}``; ``"flat"``: the
            observation ``Box`` alone (what SuperSuit's observation wrappers take), the mask in
            ``infos[agent]["action_mask"]`` (PettingZoo's other convention) and in ``action_mask(agent)``.
    """

    metadata: ClassVar[dict[str, Any]] = {
        "name": "saboteur_v0",
        "render_modes": ["ansi", "human", "rgb_array"],
        "is_parallelizable": False,
        "render_fps": 1,
    }

    def __init__(
        self,
        render_mode: str | None = None,
        render_viewer: int | str | None = None,
        obs_format: str = "dict",
        **config: Any,
    ) -> None:
        super().__init__()
        if obs_format not in OBS_FORMATS:
            raise ConfigError(f"obs_format={obs_format!r} is not valid; valid: {', '.join(map(repr, OBS_FORMATS))}")
        self.obs_format = obs_format
        self.config = GameConfig(**config)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ConfigError(f"render_mode={render_mode!r} is not valid; valid: None, 'ansi', 'human', 'rgb_array'")
        if render_viewer is not None and render_viewer != "omniscient" and not (
            isinstance(render_viewer, (int, np.integer))
            and not isinstance(render_viewer, (bool, np.bool_))
            and 0 <= render_viewer < self.config.num_players
        ):
            raise ConfigError(
                f"render_viewer={render_viewer!r} is not valid; valid: None, 'omniscient' or a seat "
                f"0..{self.config.num_players - 1}"
            )
        self.render_mode = render_mode
        # A numpy integer seat is stored as int: every renderer takes a plain seat index.
        self.render_viewer = render_viewer if render_viewer is None or isinstance(render_viewer, str) else int(
            render_viewer
        )
        n = self.config.num_players
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self._seat = {a: i for i, a in enumerate(self.possible_agents)}
        self.variant = self.config.variant
        # The game itself plays the config without claims; claims are a layer over it (saboteur_env.claims).
        self._game_config = self.config.game_config
        self._layout = self.variant.action_layout(self._game_config)
        obs_layout = self.variant.observation_layout(self._game_config)
        num_actions = self._layout.num_actions
        high = obs_layout.high
        self._claims: claims.ClaimsBatch | None = None
        if self.config.claims:
            self._claim_layout = claims.layout(self.config)
            self._claims = claims.ClaimsBatch(self.config, 1)
            num_actions = self._claim_layout.num_actions
            high = np.concatenate([high, self._claim_layout.high])
        obs_box = spaces.Box(0.0, high, dtype=np.float32)
        obs_space: spaces.Space = obs_box if obs_format == "flat" else spaces.Dict(
            {"observation": obs_box, "action_mask": spaces.Box(0, 1, (num_actions,), dtype=np.int8)}
        )
        # Built once: PettingZoo requires the identical space object on every call.
        self._observation_spaces = {a: obs_space for a in self.possible_agents}
        self._action_spaces: dict[str, spaces.Space] = {a: spaces.Discrete(num_actions) for a in self.possible_agents}
        self.state_space = spaces.Box(0.0, np.inf, (self.variant.state_size(self._game_config),), dtype=np.float32)
        self._zero_mask = np.zeros(num_actions, dtype=np.int8)
        self.np_random, self.np_random_seed = seeding.np_random(None)
        self.game: Any = None  # the variant's state (``variant.state_type``)

    # ---- spaces ----
    def observation_space(self, agent: str) -> spaces.Space:
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self._action_spaces[agent]

    # ---- episode ----
    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Start a new game. ``options={"game": state}`` starts from a copy of a given (e.g. hand-built) state."""
        if seed is not None:
            self.np_random, self.np_random_seed = seeding.np_random(seed)
        options = dict(options or {})
        start: Any = options.pop("game", None)
        if options:
            # PettingZoo's api_test passes arbitrary options; unknown keys are reported, not fatal.
            warnings.warn(f"reset(options=...) ignores unknown keys {sorted(options)}; known: 'game'", stacklevel=2)
        if start is not None:
            adopt = getattr(self.variant, "adopt", None)  # e.g. a reference state for a variant on the core
            if adopt is not None and start is not None and getattr(start, "config", None) == self._game_config:
                start = adopt(start)
            if (not isinstance(start, self.variant.state_type) or start.config != self._game_config
                    or start.game_over):
                raise ConfigError(
                    f"options['game'] must be an unfinished {self.variant.state_type.__name__} with this "
                    f"environment's config, got {type(start).__name__}"
                )
            self.variant.check_state(start)  # StateError (a ValueError) naming the broken invariant
            self.game = start.clone()
        else:
            self.game = self.variant.new_game(self._game_config, self.np_random)
        if self._claims is not None:
            self._claims.new_games()
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._infos_set = False
        self._rewards_set = False
        self.agent_selection = self.possible_agents[self.game.current]
        self._flat_masks()

    def observe(self, agent: str) -> Any:
        obs = self._observe_dict(agent)
        return obs["observation"] if self.obs_format == "flat" else obs

    def action_mask(self, agent: str) -> np.ndarray:
        """``agent``'s legal actions (int8; all zeros unless it is to act): the mask of either ``obs_format``."""
        return self._observe_dict(agent)["action_mask"]

    def _flat_masks(self) -> None:
        """With ``obs_format="flat"`` each agent's infos hold its mask (fresh per agent, as every info here)."""
        if self.obs_format != "flat":
            return
        for a in self.agents:
            if a == self.agent_selection and not (self.terminations[a] or self.truncations[a]):
                mask = self.action_mask(a)
            else:
                mask = self._zero_mask.copy()
            self.infos[a] = dict(self.infos[a], action_mask=mask)

    def _observe_dict(self, agent: str) -> dict[str, np.ndarray]:
        game = self._require_game()
        seat = self._seat[agent]
        obs = self.variant.encode_observation(game, seat)
        live = agent == self.agent_selection and not (self.terminations.get(agent) or self.truncations.get(agent))
        if self._claims is not None:
            cl = self._claims
            block = cl.encode(np.array([seat]), np.array([game.round]), np.array([game.current]))[0]
            obs = np.concatenate([obs, block])
            if not live:
                return {"observation": obs, "action_mask": self._zero_mask.copy()}
            mask = cl.full_mask(self.variant.legal_action_mask(game)[None], claims.state_fields(game))[0]
            return {"observation": obs, "action_mask": mask}
        if live:
            mask = self.variant.legal_action_mask(game).view(np.int8).copy()
        else:
            mask = self._zero_mask.copy()
        return {"observation": obs, "action_mask": mask}

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if not self.agents:
            raise GameOverError("the game is over and every agent has been removed; call reset()")
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise ValueError(f"{agent} is alive: step() needs an action id, not None")
        game = self._require_game()
        if self._claims is not None:
            act = self._claim_layout.check(action)
            if self._claim_layout.is_claim(act):
                self._step_claim(agent, act)
                return
            if self._claims.window[0] >= 0:
                raise IllegalActionError(
                    f"{agent} has a report window open: only claims or 'done' (action {self._claim_layout.done_id})"
                    f" are legal, not the game action {act} ({self._layout.to_string(act)})"
                )
            before = self._claims.knowledge(claims.state_fields(game))
            actor = game.current
            self.variant.apply_action(game, act, inplace=True)  # raises before any change on bad input
            self._claims.after_game_actions(np.array([0]), np.array([actor]), before, claims.state_fields(game),
                                            np.array([game.round_just_ended]), np.array([game.game_over]))
        else:
            self.variant.apply_action(game, action, inplace=True)  # raises before any change on bad input
        self._cumulative_rewards[agent] = 0.0
        # Rewards are only non-zero at a round end; skip the per-agent bookkeeping otherwise.
        reward_step = game.round_just_ended
        if reward_step or self._rewards_set:
            values = game.last_rewards.tolist()
            for a, seat in self._seat.items():
                self.rewards[a] = values[seat]
            self._rewards_set = reward_step
        if game.round_just_ended:
            # What each seat may know of the round, as a fresh copy per seat (an agent that edits its info
            # changes nothing else).
            result = game.round_results[-1]
            public = self.variant.public_round_result
            self.infos = {a: {"round_result": public(result, self._seat[a])} for a in self.agents}
            self._infos_set = True
        elif self._infos_set:
            self.infos = {a: {} for a in self.agents}
            self._infos_set = False
        if game.game_over:
            ranking = api.final_ranking(game)
            totals = self.variant.returns(game)
            for a, seat in self._seat.items():
                self.terminations[a] = True
                self.infos[a] = dict(self.infos[a], final_ranking=ranking[seat], nuggets=int(totals[seat]))
            self.agent_selection = self.possible_agents[(self._seat[agent] + 1) % self.config.num_players]
        else:
            self.agent_selection = self.possible_agents[self._to_act(game)]
        if reward_step:
            self._accumulate_rewards()
        self._flat_masks()
        if self.render_mode == "human":
            self.render()

    def _to_act(self, game: Any) -> int:
        if self._claims is not None and self._claims.window[0] >= 0:
            return int(self._claims.window[0])
        return int(game.current)

    def _step_claim(self, agent: str, action: int) -> None:
        """A claim: recorded with its truth labels in the claims log, public in every observation and in every
        agent's info; the game does not change and the same seat (or the next, after a report window) acts."""
        game = self._require_game()
        cl = self._claims
        assert cl is not None
        fields = claims.state_fields(game)
        size = cl.log_size
        cl.apply_claims(np.array([0]), np.array([action]), np.array([game.current]), np.array([game.round]), fields)
        self._cumulative_rewards[agent] = 0.0
        if self._rewards_set:
            self.rewards = dict.fromkeys(self.agents, 0.0)
            self._rewards_set = False
        if cl.log_size > size:
            public = cl.public_claim(cl.records()[-1])
            self.infos = {a: {"claim": dict(public)} for a in self.agents}
            self._infos_set = True
        elif self._infos_set:
            self.infos = {a: {} for a in self.agents}
            self._infos_set = False
        self.agent_selection = self.possible_agents[self._to_act(game)]
        self._flat_masks()
        if self.render_mode == "human":
            self.render()

    def claims_log(self) -> list[dict[str, Any]]:
        """The claims of the current game with their truth labels (``truth``, ``known``, ``lie``): like
        ``state()``, for logs and analysis, NOT for agents. Empty without ``claims=True``."""
        if self._claims is None:
            return []
        return self._claims.records(slot=0, game=int(self._claims.games[0]))

    def state(self) -> np.ndarray:
        """Full state for centralised critics. NOT for agents: it contains every hidden element."""
        return self.variant.encode_state(self._require_game())

    def clone_game(self) -> Any:
        """An independent copy of the engine state."""
        return self._require_game().clone()

    def action_to_string(self, action: int) -> str:
        if self._claims is not None and self._claim_layout.is_claim(self._claim_layout.check(action)):
            return self._claim_layout.to_string(int(action))
        return self._layout.to_string(action)

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode; pass 'ansi', 'human' or 'rgb_array'")
            return None
        if self.render_mode == "rgb_array":
            return self.variant.render_image(self._require_game(), self.render_viewer)
        text = self.variant.render_text(self._require_game(), self.render_viewer)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass

    def _require_game(self) -> Any:
        if self.game is None:
            raise GameOverError("reset() must be called before using the environment")
        return self.game
