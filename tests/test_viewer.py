"""Board images, the terminal play CLI and the replay viewer."""

from __future__ import annotations

import gzip
import io
import json

import numpy as np
import pytest
from conftest import BOARD_ROW2, place

from experiments import play
from experiments.tournament import loop, replay
from experiments.tournament.rounds import GameSpec
from experiments.web.scene import board_scene
from saboteur_env import (
    GameConfig,
    action_layout,
    apply_action,
    legal_action_mask,
    new_game,
    player_view,
    raw_env,
    render_image,
)
from saboteur_env.base.cards import KIND_CODES
from saboteur_env.base.positions import make_state


def test_image__shape_and_changes_with_placements():
    state = make_state(None, BOARD_ROW2, hands={0: {"T05": 1}}, goals=("stone_a", "gold", "stone_b"))
    before = render_image(state, 0)
    assert before.dtype == np.uint8 and before.ndim == 3 and before.shape[2] == 3
    after = render_image(apply_action(state, place(state, "T05", 2, 3)), 0)
    assert after.shape == before.shape and not np.array_equal(after, before)


def test_image__peeked_goal_is_marked_for_its_seat_only():
    state = make_state(None, BOARD_ROW2, peeked={0: [1]}, goals=("stone_a", "gold", "stone_b"))
    plain = make_state(None, BOARD_ROW2, goals=("stone_a", "gold", "stone_b"))
    assert not np.array_equal(render_image(state, 0), render_image(plain, 0))
    assert np.array_equal(render_image(state, 1), render_image(plain, 1))
    assert np.array_equal(render_image(state, None), render_image(plain, None))
    assert not np.array_equal(render_image(plain, "omniscient"), render_image(plain, None))


def test_image__env_rgb_array_mode():
    e = raw_env(num_players=5, render_mode="rgb_array", render_viewer=2)
    e.reset(seed=1)
    img = e.render()
    assert img.dtype == np.uint8 and img.shape[2] == 3
    with pytest.raises(ValueError, match="viewer"):
        render_image(e.game, 9)


def _session(lines: list[str], *argv: str) -> str:
    out = io.StringIO()
    stdin = io.StringIO("\n".join(lines) + "\n")
    code = play.main(["--players", "3", "--seed", "4", "--rounds", "1", *argv], stdin=stdin, stdout=out)
    assert code == 0
    return out.getvalue()


def test_play__invalid_inputs_get_messages_and_a_new_prompt():
    text = _session(["", "hello", "999", "T05 9,9", "T05 x", "d ZZZ", "map 7", "break hammer 1", "help", "quit"])
    assert "empty input" in text
    assert "cannot read 'hello'" in text
    assert "no move number 999" in text
    assert "is not a legal move now" in text
    assert "give the cell as ROW,COL" in text
    assert "say which card to discard" in text
    assert "say which goal" in text
    assert "break TOOL SEAT" in text
    assert "place T05 at row 2, col 3" in text  # help
    assert text.count("move> ") == 10 and "bye" in text and "Traceback" not in text


def test_play__a_whole_game_by_numbers_and_notation():
    text = _session(["d T01", *["0"] * 80])
    assert "game over" in text and "round 1 over" in text
    eof = _session(["0"])  # input ends mid-game: leaves cleanly
    assert "end of input" in eof


def test_play__parse_notation_matches_listed_moves():
    state = make_state(None, BOARD_ROW2, hands={0: {"T05": 1, "T06": 1, "MAP": 1, "BROKEN_CART": 1}})
    layout = state.layout
    from saboteur_env import legal_action_mask

    legal = np.flatnonzero(legal_action_mask(state))
    assert layout.to_string(play.parse_move("T05 2,3", layout, legal)) == "place T05 at (2,3)"
    assert layout.to_string(play.parse_move("T06' 2,3", layout, legal)) == "place T06 rot180 at (2,3)"
    assert layout.to_string(play.parse_move("map 2", layout, legal)) == "map goal 2"
    assert layout.to_string(play.parse_move("break cart 1", layout, legal)) == "break cart seat+1"
    assert layout.to_string(play.parse_move("d t05", layout, legal)) == "discard T05"
    with pytest.raises(play.MoveError):
        play.parse_move("rock 2,1", layout, legal)


def test_replay__logged_game_ends_on_the_live_final_board(tmp_path):
    n, seed = 4, 21
    records = loop.play(GameSpec("base", n, ("honest", "overt"), seed, beliefs=False))
    actions = [a for r in records for a in r["actions"]]
    state = new_game(GameConfig(num_players=n), np.random.default_rng(seed))
    for a in actions:  # the engine itself, action by action
        state = apply_action(state, a)
    assert state.game_over
    live = board_scene(player_view(state, 2), 2, True, [f"seat {s}" for s in range(n)])
    shots = replay.steps(GameConfig(num_players=n), seed, actions, 2)
    assert shots[-1].scene["cells"] == live["cells"] and shots[-1].scene["seats"] == live["seats"]
    assert len(shots) == len(actions) + 1 + 2 and "round 3 over" in shots[-1].caption
    images, captions = replay.frames(GameConfig(num_players=n), seed, actions[:4], "omniscient", scale=1.0)
    gif, page = tmp_path / "g.gif", tmp_path / "g.html"
    replay.write_gif(gif, images)
    replay.write_html(page, images, captions, "test")
    assert gif.stat().st_size > 0 and "const frames" in page.read_text()


@pytest.mark.parametrize("argv", [["--game", "sab2", "--players", "4", "--agents", "random"],
                                  ["--game", "duel", "--agents", "random"]])  # fmt: skip
def test_replay__saboteur_2_and_duel_logs_replay_and_are_drawn(tmp_path, argv, capsys):
    """These logs crashed the viewer (KeyError: 'miners'); now they re-play, are checked and drawn."""
    from experiments.tournament import cli as tournament

    out = tmp_path / "log"
    assert tournament.main([*argv, "--games", "1", "--secret", "5eed", "--out", str(out)]) in (0, None)
    config, seed, actions = replay.game_from_log(out, 0)
    assert config.game == argv[1] and len(actions) > 20
    page = tmp_path / "s1.html"
    assert replay.main([str(out), "--seat", "1", "--scale", "0.5", "--html", str(page)]) == 0
    assert "const frames" in page.read_text()
    shots = replay.steps(config, seed, actions, 0)  # seat 0's view: every round end has its frame
    assert sum(f.round_end for f in shots) == config.rounds and len(shots) == len(actions) + config.rounds
    assert "wrote" in capsys.readouterr().out
    with pytest.raises(ValueError, match="out of range"):
        replay.game_from_log(out, 5)
    # A tampered action: the viewer refuses the game, naming the file, the record and the difference.
    lines = gzip.open(out / "rounds.jsonl.gz", "rt").read().splitlines()
    first = json.loads(lines[0])
    first["actions"][3] = first["actions"][2] if first["actions"][3] != first["actions"][2] else first["actions"][4]
    bad = tmp_path / "bad"
    bad.mkdir()
    with gzip.open(bad / "rounds.jsonl.gz", "wt") as f:
        f.write("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    # (The swapped action may still be legal at decision 3; the game then differs from the log a little later.)
    with pytest.raises(ValueError, match=r"record 1: game 0 .* does not re-play as logged: round 0 decision \d+"):
        replay.game_from_log(bad, 0)


def test_replay__captions_hide_other_seats_discards():
    cfg = GameConfig(num_players=3, rounds=1)
    state = new_game(cfg, np.random.default_rng(0))
    layout = action_layout(cfg)
    from saboteur_env.base.actions import ActionType

    discard = next(int(a) for a in np.flatnonzero(legal_action_mask(state))
                   if layout.decode(int(a)).type == ActionType.DISCARD)  # fmt: skip
    code = KIND_CODES[layout.decode(discard).kind]
    mine = replay.steps(cfg, 0, [discard], 0)[1].caption
    theirs = replay.steps(cfg, 0, [discard], 1)[1].caption
    public = replay.steps(cfg, 0, [discard], None)[1].caption
    omniscient = replay.steps(cfg, 0, [discard], "omniscient")[1].caption
    assert mine == f"you discarded {code}"
    assert theirs == public == "seat 0 discarded a card face down"
    assert code in omniscient


def test_replay__seed_and_actions_of_any_game_and_bad_options(tmp_path, capsys):
    cfg = GameConfig(game="duel")
    state = new_game(cfg, np.random.default_rng(1))
    actions = []
    for _ in range(6):
        a = int(np.flatnonzero(legal_action_mask(state))[0])
        actions.append(a)
        state = apply_action(state, a)
    gif = tmp_path / "d.gif"
    argv = ["--game-type", "duel", "--seed", "1", "--actions", *map(str, actions), "--gif", str(gif)]
    assert replay.main(argv) == 0 and gif.stat().st_size > 0
    assert "wrote" in capsys.readouterr().out
    for bad, words in [(["--scale", "40"], "--scale 40.0 is out of range"),
                       (["--seat", "2"], "--seat 2 is out of range"), (["--actions", "999999"], "cannot replay")]:
        with pytest.raises(SystemExit):
            replay.main([*argv, *bad])
        assert words in capsys.readouterr().err


@pytest.mark.parametrize("game, players", [("base", 4), ("sab2", 5), ("duel", 2)])
def test_replay__every_round_end_frame_is_the_true_board_at_the_round_end(game, players, monkeypatch):
    """The replay (on the engine users play) draws each round's end from the view before the last move and its
    events; the numpy reference engine, its ``start_round`` patched to snapshot the view before the next deal,
    plays the same game (same seed, same actions) and gives the true board: the two scenes are equal."""
    from experiments.web.words import new_events, view_events
    from tests.test_pictures import _reference

    rules, view = _reference(game)
    config = GameConfig(game=game, num_players=players)
    seat = players - 1
    checked = 0
    start_round = rules.start_round
    for seed in range(3):
        truths: list = []

        def patched(s, rnd, *args, _truths=truths, **kwargs):
            if rnd > 0:
                _truths.append(view(s, seat))
            return start_round(s, rnd, *args, **kwargs)

        monkeypatch.setattr(rules, "start_round", patched)
        rng = np.random.default_rng(seed)
        s = rules.new_game(config, rng)
        actions, own_map = [], []
        while not s.game_over:
            prev, n = s, len(truths)
            actions.append(int(rng.choice(np.flatnonzero(rules.legal_action_mask(s)))))
            s = rules.apply_action(s, actions[-1])
            if len(truths) > n:
                fresh = new_events(view_events(view(prev, seat)), view_events(view(s, seat)))
                own_map.append(any(hasattr(e, "type") and e.type.name == "MAP" and e.actor == 0 for e in fresh))
        monkeypatch.setattr(rules, "start_round", start_round)
        ends = [f for f in replay.steps(config, seed, actions, seat) if f.round_end][:-1]  # the last: the final board
        assert len(ends) == len(truths) == config.rounds - 1
        for frame, truth, skip in zip(ends, truths, own_map, strict=True):
            if skip:  # what the seat's own map showed, when it ended the round, the next deal forgets
                continue
            want = board_scene(truth, seat, True, replay._names(config), frame.scene["title"])
            assert frame.scene["cells"] == want["cells"] and frame.scene["seats"] == want["seats"]
            checked += 1
    assert checked >= 4
