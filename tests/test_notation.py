"""One move notation (issue 34 §5): every place that prints a move prints the same name, and it parses back to the
same action id in all three games; older spellings still parse; boards draw card centres by shape."""

from __future__ import annotations

import io
from collections import Counter

import numpy as np
import pytest

from experiments import play
from experiments.tournament.summary import Summary
from experiments.web.words import moves
from saboteur_env import GameConfig, action_layout, action_to_string, apply_action, legal_action_mask, new_game
from saboteur_env.base.positions import make_state
from saboteur_env.common.notation import centre_char
from saboteur_env.text import describe_state, move_id, parse_move
from saboteur_env.text.legacy import legacy_names

BOARD = """
. . . . . . . . ?
. . . . . . . . .
S T05 T12 . . . . . ?
. . . . . . . . .
. . . . . . . . ?
"""
CONFIGS = {
    "base4": GameConfig(num_players=4),
    "base3_margin2": GameConfig(num_players=3, margin=2),
    "sab2_5": GameConfig(game="sab2", num_players=5),
    "sab2_4_margin1": GameConfig(game="sab2", num_players=4, margin=1),
    "duel": GameConfig(game="duel"),
    "duel_margin1": GameConfig(game="duel", margin=1),
}


def _positions(cfg: GameConfig, games: int = 2, seed: int = 0):
    """States of random games (every decision, Saboteur 2's multi-decision phases included)."""
    rng = np.random.default_rng(seed)
    for g in range(games):
        s = new_game(cfg, np.random.default_rng(seed + g))
        while not s.game_over:
            yield s
            s = apply_action(s, int(rng.choice(np.flatnonzero(legal_action_mask(s)))))


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_notation__every_place_prints_a_name_that_parses_back(name):
    """action_to_string, the text interface's legal moves, the terminal and web move lists, each over the legal moves
    of random games: the printed text parses (text parser and terminal parser) to the action it was printed for."""
    cfg = CONFIGS[name]
    layout = action_layout(cfg)
    seen = 0
    for s in _positions(cfg):
        mask = legal_action_mask(s)
        legal = np.flatnonzero(mask)
        seat = int(s.current)
        listed = describe_state(s, seat)["legal_moves"]
        assert listed == [action_to_string(cfg, int(a)) for a in legal]
        for a, move in zip(legal, moves(cfg, [int(a) for a in legal], seat), strict=True):
            a = int(a)
            name_ = action_to_string(cfg, a)
            assert layout.to_string(a) == name_
            assert move.id == a and move.text.startswith(name_)  # the web/terminal line: the name (+ a seat gloss)
            for printed in (name_, move.text):
                assert parse_move(cfg, printed, mask) == a, printed
                assert play.parse_move(printed, layout, legal, cfg) == a, printed
            seen += 1
    assert seen > 200


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_notation__older_spellings_name_the_same_moves(name):
    cfg = CONFIGS[name]
    old = legacy_names(cfg)
    # An older spelling shared by two actions (the old Saboteur 2 "double repair: pickaxe of seat+1" named no card)
    # reads as one of them; every other spelling reads as its own action.
    shared = Counter(x for spellings in old for x in spellings)
    for a in range(0, len(old), 3):
        for spelling in old[a]:
            b = move_id(cfg, spelling)
            assert b == a if shared[spelling] == 1 else spelling in old[b], spelling
    # the names themselves are distinct from each other
    names = [action_to_string(cfg, a) for a in range(len(old))]
    assert len(set(names)) == len(names)


def test_notation__cells_are_frame_coordinates_and_keep_their_sign():
    cfg = GameConfig(num_players=4, margin=1)
    s = new_game(cfg, np.random.default_rng(0))
    mask = legal_action_mask(s)
    # With a margin the start (frame (2,0)) sits at storage row 3, col 1; a move beside it, west, is column -1.
    west = move_id(cfg, "place T05 at (2,-1)")
    east = move_id(cfg, "place T05 at (2,1)")
    assert west != east
    assert action_layout(cfg).decode(west).col == -1 and action_layout(cfg).decode(east).col == 1
    assert move_id(cfg, "place T05 at ( 2 , -1 )") == west and move_id(cfg, "PLACE t05 AT 2,-1") == west
    # The older text spelling counted storage cells (frame + margin): r3c0 is the same west cell.
    assert move_id(cfg, "play T05 at r3c0 rot0") == west
    if mask[west]:
        assert parse_move(cfg, "I place T05 at (2,-1).", mask) == west


def test_notation__terminal_short_forms_and_bad_input():
    s = make_state(None, BOARD.replace("T12", "."), hands={0: {"T05": 1, "T06": 1, "MAP": 1, "BROKEN_CART": 1}})
    cfg, layout = s.config, s.layout
    legal = np.flatnonzero(legal_action_mask(s))
    for text, name in (("T05 2,2", "place T05 at (2,2)"), ("T06' 2,2", "place T06 rot180 at (2,2)"),
                       ("place T06 rot180 at (2,2)", "place T06 rot180 at (2,2)"), ("map 2", "map goal 2"),
                       ("map goal 2", "map goal 2"), ("break cart seat+1", "break cart seat+1"),
                       ("break cart 1", "break cart seat+1"), ("d T05", "discard T05")):  # fmt: skip
        assert layout.to_string(play.parse_move(text, layout, legal, cfg)) == name, text
    for text, words in (("place T05 at (9,9)", "cannot read"), ("T05 9,9", "not a legal move now"),
                        ("place T0", "fits"), ("", "empty input")):  # fmt: skip
        with pytest.raises(play.MoveError, match=words):
            play.parse_move(text, layout, legal, cfg)


@pytest.mark.parametrize("game", ["base", "duel"])
def test_notation__terminal_reports_each_bot_move_once(game):
    """The view no longer repeats the events in offsets (``seat+2 placed ...``) after the report (``seat 2 ...``)."""
    out = io.StringIO()
    argv = ["--game", game, "--seed", "3", "--rounds", "1"] + (["--players", "3"] if game == "base" else [])
    assert play.main(argv, stdin=io.StringIO("0\n" * 200), stdout=out) == 0
    lines = out.getvalue().splitlines()
    events = [ln for ln in lines if ln.startswith("  > ")]
    assert events and not any(ln.startswith("  > seat+") or ln.startswith("  > me ") for ln in events)
    assert not any(ln.startswith("  > opponent ") for ln in events)  # the duel view's own relative list
    assert any("placed" in ln and "at (" in ln for ln in events)


def test_notation__card_centres_drawn_by_shape():
    from saboteur_env.common.cards import EDGE_PAIRS

    def joined(*pairs: str) -> int:
        names = ["".join("NESW"[e] for e in p) for p in EDGE_PAIRS]
        return sum(1 << names.index(p) for p in pairs)

    assert centre_char(joined("EW")) == "─" and centre_char(joined("NS")) == "│"
    assert centre_char(joined("NE")) == "└"
    assert centre_char(joined(*("NE", "NS", "NW", "ES", "EW", "SW"))) == "┼"
    assert centre_char(0) == "■"  # a dead end: nothing joined
    from saboteur_env import render_text

    s = make_state(None, BOARD, hands={0: {"T05": 1}})
    row = next(ln for ln in render_text(s, 0).splitlines() if ln.startswith("  2 "))
    assert "━S━━─━" in row.replace(" ", "") or "S━━─" in row  # the straight T05: no crossroads centre
    assert "■" in row and "┼" not in row


def test_notation__tournament_table_names_its_unit_and_roles_and_a_single_game_has_no_nan():
    from experiments.tournament.loop import play
    from experiments.tournament.rounds import GameSpec

    summary = Summary()
    summary.add(play(GameSpec("base", 4, ("random", "random"), 0, secret=0)))
    table = summary.table()
    assert "nan" not in table and "n/a" in table and "Per round" in table
    assert "miner win" in table and "sab. win" in table and "nuggets/miner" in table and "nuggets/sab." in table
    summary.add(play(GameSpec("base", 4, ("random", "random"), 1, secret=0)))
    assert "n/a" not in summary.table()
