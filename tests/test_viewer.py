"""Board images, the terminal play CLI and the replay viewer."""

from __future__ import annotations

import io

import numpy as np
import pytest
from conftest import BOARD_ROW2, place

from agents import make_agent
from agents.base import RoleDispatch
from experiments import play, replay
from experiments.tournament import play_game
from saboteur_env import GameConfig, apply_action, raw_env, render_image
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
    assert layout.to_string(play.parse_move("T05 2,3", layout, legal)) == "place T05 straight E-W at (2,3)"
    assert layout.to_string(play.parse_move("T06' 2,3", layout, legal)) == "place T06 curve N-E 180 at (2,3)"
    assert layout.to_string(play.parse_move("map 2", layout, legal)) == "map on goal 2"
    assert layout.to_string(play.parse_move("break cart 1", layout, legal)) == "play broken cart on seat+1"
    assert layout.to_string(play.parse_move("d t05", layout, legal)) == "discard T05 straight E-W"
    with pytest.raises(play.MoveError):
        play.parse_move("rock 2,1", layout, legal)


def test_replay__logged_game_ends_on_the_live_final_board(tmp_path):
    n, seed = 4, 21
    records = play_game(n, "honest", "overt", seed, beliefs=False)
    # The live game, played again exactly as the tournament plays it.
    env = raw_env(num_players=n)
    cfg = env.config
    agents = [RoleDispatch(cfg, make_agent("honest", cfg, "miner"), make_agent("overt", cfg, "saboteur"))
              for _ in range(n)]  # fmt: skip
    env.reset(seed=seed)
    for i, (agent, ss) in enumerate(zip(agents, np.random.SeedSequence(seed).spawn(n), strict=True)):
        agent.reset(i, n, int(ss.generate_state(1)[0]))
    for name in env.agent_iter():
        obs, _, term, _, _ = env.last()
        if term:
            break
        env.step(agents[env.possible_agents.index(name)].act(obs["observation"], obs["action_mask"]))
    live = render_image(env.game, "omniscient")
    actions = [a for r in records for a in r["actions"]]
    images, captions = replay.frames(GameConfig(num_players=n), seed, actions, "omniscient")
    assert np.array_equal(images[-1], live)
    assert len(images) == len(actions) + 1 and "round over" in captions[-1]
    gif, page = tmp_path / "g.gif", tmp_path / "g.html"
    replay.write_gif(gif, images[:5])
    replay.write_html(page, images[:5], captions[:5], "test")
    assert gif.stat().st_size > 0 and "const frames" in page.read_text()


def test_replay__captions_hide_other_seats_discards():
    state = make_state(None, hands={0: {"T05": 1}}, current=0)
    layout = state.layout
    from saboteur_env.base.actions import Action, ActionType

    after = apply_action(state, layout.encode(Action(ActionType.DISCARD, 0 + 4)))
    i = after.num_events - 1
    assert replay.caption(after, i, 0) == "seat 0 discarded T05"
    assert replay.caption(after, i, 1) == "seat 0 discarded a card"
    assert replay.caption(after, i, None) == "seat 0 discarded a card"
