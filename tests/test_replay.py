"""Replays (experiments.tournament.replay) of the three games: the omniscient frames show the true hidden facts, a
seat's frames
show only its view, and the GIF/HTML export shows every round end before the next deal."""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np
import pytest

from experiments.tournament import replay
from experiments.web.scene import to_svg
from experiments.web.words import card_info, hand_kinds
from saboteur_env import GameConfig, apply_action, legal_action_mask, new_game, player_view
from tests.hidden import RESAMPLERS

GAMES = [("base", 4), ("sab2", 5), ("duel", 2)]


def _random_game(cfg: GameConfig, seed: int) -> list[int]:
    state = new_game(cfg, np.random.default_rng(seed))
    rng = np.random.default_rng(seed + 1)
    actions = []
    while not state.game_over:
        a = int(rng.choice(np.flatnonzero(legal_action_mask(state))))
        actions.append(a)
        state = apply_action(state, a)
    return actions


def _digging_game(cfg: GameConfig, seed: int) -> list[int]:
    """A whole game where the seats mostly lay path cards as far east as they can (rounds end sooner than in random
    play, which keeps the picture tests short)."""
    from experiments.web.words import moves

    state = new_game(cfg, np.random.default_rng(seed))
    rng = np.random.default_rng(seed + 1)
    actions = []
    while not state.game_over:
        legal = [int(a) for a in np.flatnonzero(legal_action_mask(state))]
        lay = [m for m in moves(cfg, legal, int(state.current)) if m.cell is not None and m.card is not None
               and not m.discard and m.target is None]  # fmt: skip
        if lay and rng.random() < 0.9:
            east = max(m.cell % cfg.cols for m in lay)
            a = int(rng.choice([m.id for m in lay if m.cell % cfg.cols == east]))
        else:
            a = int(rng.choice(legal))
        actions.append(a)
        state = apply_action(state, a)
    return actions


def _frame_states(cfg: GameConfig, seed: int, actions: list[int]) -> list[Any]:
    """The state each frame of :func:`replay.steps` shows the goals of: the deal, the state after every move, and
    for a round's end (drawn before the next deal) the state before its last move, whose goals are that round's."""
    state = new_game(cfg, np.random.default_rng(seed))
    out = [state]
    for a in actions:
        after = apply_action(state, a)
        out.extend([state, after] if after.round_just_ended and not after.game_over else [after])
        state = after
    return out


def _hand(cfg: GameConfig, counts: Any) -> str:
    counts = np.asarray(counts)[: hand_kinds(cfg)]
    return " ".join(f"{card_info(cfg, int(k))['code']}x{int(counts[k])}" for k in np.flatnonzero(counts)) or "-"


@pytest.mark.parametrize("game,players", GAMES)
def test_replay__omniscient_frames_show_every_goal_role_and_hand(game, players):
    cfg = GameConfig(game=game, num_players=players, rounds=2)
    actions = _digging_game(cfg, 12)
    shots = replay.steps(cfg, 12, actions, "omniscient")
    public = replay.steps(cfg, 12, actions, None)
    states = _frame_states(cfg, 12, actions)
    assert len(shots) == len(states) == len(public)
    unpeeked = 0
    for k, (shot, pub, state) in enumerate(zip(shots, public, states, strict=True)):
        truth = replay.true_goals(state)
        down = {c["r"] * cfg.cols + c["c"]: c for c in shot.scene["cells"] if c["fill"] == "facedown"}
        assert set(down) <= set(truth), k
        for cell, c in down.items():
            assert c["glyph"] == truth[cell][0] and truth[cell][1] in c["tip"], (k, cell)
        # The public frame of the same moment keeps the goals face down (nothing peeked shows there).
        pub_down = [c for c in pub.scene["cells"] if c["fill"] == "facedown"]
        assert len(pub_down) == len(down) and all(c["glyph"] == "?" for c in pub_down)
        unpeeked += len(down)
        if shot.round_end:
            continue
        for row in shot.scene["seats"]:
            q = row["seat"]
            assert f"hand: {_hand(cfg, state.hands[q])}" in row["marks"]
            if game != "duel":
                role = int(state.roles[q])
                names = __import__(f"saboteur_env.{game}.cards", fromlist=["ROLE_NAMES"]).ROLE_NAMES
                assert f"role: {names[role]}" in row["marks"]
    assert unpeeked > 20
    # A goal no seat ever peeked is shown too: in the deal frame nobody has looked at anything.
    deal = {c["r"] * cfg.cols + c["c"]: c["glyph"] for c in shots[0].scene["cells"] if c["fill"] == "facedown"}
    assert deal == {cell: glyph for cell, (glyph, _) in replay.true_goals(states[0]).items()}
    golds = [g for g in deal.values() if g in ("g",) or (game == "duel" and g != "0")]
    assert golds, deal


@pytest.mark.parametrize("game,players", GAMES)
def test_replay__a_seats_frames_are_the_same_whatever_the_hidden_state(game, players, monkeypatch):
    """Every view a seat's replay draws comes from a state whose hidden part (other hands, roles, the pile,
    unpeeked goals) was redrawn: the frames and captions do not change."""
    cfg = GameConfig(game=game, num_players=players, rounds=2)
    actions = _random_game(cfg, 5)
    seat = 1
    want = [(to_svg(f.scene), f.caption, f.round_end) for f in replay.steps(cfg, 5, actions, seat)]
    rng = np.random.default_rng(3)
    calls = []

    def resampled_view(state: Any, s: int) -> Any:
        assert s == seat  # a seat's replay looks at that seat's view only
        calls.append(s)
        return player_view(RESAMPLERS[game](state, s, rng), s)

    monkeypatch.setattr(replay, "player_view", resampled_view)
    got = [(to_svg(f.scene), f.caption, f.round_end) for f in replay.steps(cfg, 5, actions, seat)]
    assert len(calls) > len(actions) and got == want
    # The check can fail: what the resampling redraws shows in the omniscient picture of the same moments.
    monkeypatch.undo()
    state = new_game(cfg, np.random.default_rng(5))
    changed = 0
    for a in actions[:6]:
        other = RESAMPLERS[game](state, seat, rng)
        changed += to_svg(replay._scene(other, "omniscient", "")) != to_svg(replay._scene(state, "omniscient", ""))
        state = apply_action(state, a)
    assert changed >= 5


@pytest.mark.parametrize("game,players,seed", [("base", 4, 2), ("sab2", 5, 1), ("duel", 2, 0)])
def test_replay__gif_and_html_of_each_game_show_every_round_end_before_the_next_deal(game, players, seed, tmp_path):
    from PIL import Image

    cfg = GameConfig(game=game, num_players=players, rounds=2)
    actions = _digging_game(cfg, seed)
    gif, page = tmp_path / "g.gif", tmp_path / "g.html"
    argv = ["--game-type", game, "--players", str(players), "--seed", str(seed), "--rounds", "2",
            "--scale", "0.5", "--gif", str(gif), "--html", str(page)]  # fmt: skip
    assert replay.main([*argv, "--seat", "0", "--actions", *map(str, actions)]) == 0
    frames = len(actions) + 1 + 1  # the deal, every move, and the first round's end before the next deal
    with Image.open(gif) as im:
        assert im.n_frames <= frames and im.size[0] > 200
    text = page.read_text()
    captions = json.loads(re.search(r"const captions = (\[.*?\]);", text).group(1))
    images = json.loads(re.search(r"const frames = (\[.*?\]);", text).group(1))
    assert len(captions) == len(images) == frames
    ends = [i for i, c in enumerate(captions) if re.search(r"round \d over", c)]
    assert len(ends) == 2 and ends[-1] == frames - 1
    for n, i in enumerate(ends[:-1]):
        assert f"round {n + 1} over" in captions[i] and captions[i + 1] == f"round {n + 2} dealt"
        assert images[i] != images[i + 1]  # the board as the round ended, then the new deal
        if game != "duel":
            assert "roles: " in captions[i]
    assert replay.main([*argv, "--omniscient", "--actions", *map(str, actions[:5])]) == 0
    assert len(json.loads(re.search(r"const captions = (\[.*?\]);", page.read_text()).group(1))) == 6
