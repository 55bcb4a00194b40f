"""Learned talkers (issue 36, part 2b): self-play with the claims rule (``experiments.train.selfplay --claims``), the
network file that plays the claims game itself, and its seat everywhere a talker is seated (``claims+native:NAME``:
the tournament, the bluffing benchmark's arms)."""

from __future__ import annotations

import copy
import csv
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("torch", reason="needs the train extra (pip install -e '.[train]')")

import torch  # after the importorskip: torch comes with the train extra
from hidden import RESAMPLERS

from agents import make_agent
from agents.claims import NativeTalker, make_native_talker, talks_natively
from agents.learned import LearnedAgent, NumpyPolicy, PolicyMismatchError
from agents.search import SearchAgent
from experiments.bluff.protocol import protocol
from experiments.bluff.run import arm_name, benchmark_name
from experiments.tournament.loop import play
from experiments.tournament.rounds import GameSpec
from experiments.train.league import League, talking
from experiments.train.selfplay.args import Args
from experiments.train.selfplay.policy import Policy, export_npz, load_npz
from experiments.train.selfplay.trainer import Trainer
from saboteur_env import GameConfig, encode_observation, legal_action_mask, num_actions, observation_layout, raw_env
from saboteur_env.claims import layout

CLAIMS5 = GameConfig(num_players=5, claims=True)


def _rows(path: Path) -> list[dict[str, str]]:
    with (path / "progress.csv").open() as fh:
        return list(csv.DictReader(fh))


def _talker_file(tmp: Path, config: GameConfig = CLAIMS5, seed: int = 1) -> Path:
    torch.manual_seed(seed)
    return export_npz(Policy(config, hidden=16, role_heads=True), config, tmp / f"talker{config.num_players}.npz")


def test_a_claims_policy_reads_the_claims_block_and_acts_on_claim_ids(tmp_path: Path) -> None:
    lay = layout(CLAIMS5)
    model = Policy(CLAIMS5, hidden=16)
    assert model.obs_size == observation_layout(CLAIMS5).size + lay.size
    assert model.num_actions == lay.num_actions == num_actions(CLAIMS5) + lay.num_claims
    path = export_npz(model, CLAIMS5, tmp_path / "p.npz")
    pol = NumpyPolicy(path)
    assert pol.claims == 1 and pol.meta["claims"] == 1
    agent = make_agent(f"learned:{path}", CLAIMS5)
    assert isinstance(agent, LearnedAgent) and talks_natively(agent)
    # the file plays only the claims game of its K; a file without claims only games without them
    with pytest.raises(PolicyMismatchError, match=r"trained with claims .1 per turn.; this game is played without"):
        make_agent(f"learned:{path}", GameConfig(num_players=5))
    with pytest.raises(PolicyMismatchError, match=r"this game is played with claims .2 per turn"):
        make_agent(f"learned:{path}", GameConfig(num_players=5, claims=True, claims_per_turn=2))
    plain = export_npz(Policy(GameConfig(num_players=5), hidden=8), GameConfig(num_players=5), tmp_path / "q.npz")
    with pytest.raises(PolicyMismatchError, match="seat it as claims:learned:PATH"):
        make_agent(f"learned:{plain}", CLAIMS5)
    assert not talks_natively(make_agent(f"learned:{plain}", GameConfig(num_players=5)))


def test_a_claims_network_grows_from_a_file_without_claims(tmp_path: Path) -> None:
    plain_cfg = GameConfig(num_players=5)
    torch.manual_seed(4)
    plain = Policy(plain_cfg, hidden=16, role_heads=True)
    path = export_npz(plain, plain_cfg, tmp_path / "plain.npz")
    grown = Policy(CLAIMS5, hidden=16, role_heads=True)
    load_npz(grown, path, CLAIMS5)
    env = raw_env(num_players=5, claims=True)
    env.reset(seed=2)
    obs = torch.from_numpy(np.stack([env.observe(a)["observation"] for a in env.possible_agents]))
    obs[:, -layout(CLAIMS5).size :] = torch.rand(5, layout(CLAIMS5).size)  # whatever was said: not heard yet
    a = num_actions(plain_cfg)
    with torch.no_grad():
        want, v_want = plain(obs[:, : plain.obs_size])
        got, v_got = grown(obs)
    assert torch.allclose(got[:, :a], want, atol=1e-6) and torch.allclose(v_got, v_want, atol=1e-6)
    with pytest.raises(ValueError, match="does not fit this network"):
        load_npz(Policy(CLAIMS5, hidden=8, role_heads=True), path, CLAIMS5)


def test_self_play_with_claims_trains_talks_and_resumes(tmp_path: Path) -> None:
    args = dict(game="base", players=4, num_envs=8, rollout=16, steps=8 * 16 * 3, epochs=1, minibatches=2, hidden=16,
                seed=5, claims=True, league=0.5, league_agents="heuristic", snapshot_every=0, checkpoint_every=1,
                eval_every=3, eval_games=4)  # fmt: skip
    trainer = Trainer(Args(**args, out=str(tmp_path / "a")))  # type: ignore[arg-type]
    assert trainer.league.scripted == ["claims:heuristic"]  # the league's scripted seats talk
    env = trainer.env
    assert env.claims is not None and trainer.model.num_actions == env.num_actions
    row = trainer.train(quiet=True)
    assert np.isfinite(row["eval_diff"])  # the ladder check played claims:heuristic opponents
    # the progress rows report the learner's talk by role: an untrained policy claims at some of its decisions
    rows = _rows(tmp_path / "a")
    rates = [float(r[f"claims_per_decision_{role}"]) for r in rows for role in ("miner", "saboteur")]
    assert any(0 < x < 1 for x in rates)
    made = sum(float(r[f"{k}_claims_{role}"]) for r in rows for k in ("goal", "accuse", "clear", "suspect")
               for role in ("miner", "saboteur"))  # fmt: skip
    assert made > 0
    assert env.claims.log_size < 64  # the log of truth labels is drained as the run goes
    assert NumpyPolicy(tmp_path / "a" / "policy.npz").claims == 1
    # self-play resumes exactly (the claims layer's state is in the checkpoint; scripted league seats restart
    # their memory on resume, so this part plays no league); a run without claims does not resume it
    solo = {**args, "league": 0.0, "league_agents": "", "eval_every": 0}
    straight = Trainer(Args(**solo, out=str(tmp_path / "s")))  # type: ignore[arg-type]
    straight.train(quiet=True)
    half = Trainer(Args(**solo, out=str(tmp_path / "b")))  # type: ignore[arg-type]
    half.train(max_iterations=2, quiet=True)
    again = Trainer(Args(**solo, out=str(tmp_path / "b"), resume=True))  # type: ignore[arg-type]
    again.train(quiet=True)
    for (name, p), q in zip(straight.model.state_dict().items(), again.model.state_dict().values(), strict=True):
        assert torch.equal(p, q), name
    other = {**solo, "claims": False}
    with pytest.raises(ValueError, match="claims"):
        Trainer(Args(**other, out=str(tmp_path / "b"), resume=True)).train(quiet=True)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"claims": True, "net": "compact"}, "net='compact'"),
        ({"claims": True, "features": "bayes", "players": 4}, "features='bayes'"),
        ({"claims_per_turn": 2}, "give --claims"),
        ({"claims": True, "claims_per_turn": 9}, "claims_per_turn"),
    ],
)
def test_bad_claims_options_are_refused(kw: dict[str, object], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        Args(**kw).check()  # type: ignore[arg-type]


class _Recorder:
    """A talker that records what it saw and plays the first legal move."""

    name = "recorder"
    talks = True

    def __init__(self) -> None:
        self.seen: list[tuple[np.ndarray, np.ndarray]] = []

    def reset(self, seat: int, num_players: int, seed: int | None) -> None:
        pass

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        self.seen.append((np.array(observation), np.array(action_mask)))
        return int(np.flatnonzero(action_mask)[-1])  # the highest id: a claim whenever one is legal


def _play_one(agent: NativeTalker, seed: int = 3, steps: int = 400) -> list[int]:
    env = raw_env(num_players=5, claims=True)
    env.reset(seed=seed)
    agent.reset(0, 5, 0)
    others = [make_agent("claims:heuristic", env.config) for _ in range(4)]
    for i, a in enumerate(others, 1):
        a.reset(i, 5, i)
    played = []
    for name in env.agent_iter(steps):
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        seat = env.possible_agents.index(name)
        act = (agent if seat == 0 else others[seat - 1]).act(obs["observation"], obs["action_mask"])
        assert obs["action_mask"][act] == 1
        if seat == 0:
            played.append(act)
        env.step(act)
    return played


def test_native_talker_arms_mute_and_deaf() -> None:
    lay = layout(CLAIMS5)
    a = lay.game_actions
    loud = _Recorder()
    said = _play_one(NativeTalker(loud, CLAIMS5))
    assert any(x >= a for x in said)  # it talks
    mute_inner = _Recorder()
    quiet = _play_one(NativeTalker(mute_inner, CLAIMS5, mute=True))
    # mute: no claim except closing a report window, never offered a claim id
    assert all(x < a or x == lay.done_id for x in quiet)
    assert all(not m[a:].any() for _, m in mute_inner.seen)
    deaf_inner = _Recorder()
    _play_one(NativeTalker(deaf_inner, CLAIMS5, deaf=True))
    heard = slice(-lay.size + lay.slices["status"].stop, None)
    assert all(not o[heard].any() for o, _ in deaf_inner.seen)  # nobody's claims reach it
    assert any(o[-lay.size :][lay.slices["status"]].any() for o, _ in deaf_inner.seen)  # the status part does
    # the loud talker heard claims (so the deaf test above is not vacuous)
    assert any(o[heard].any() for o, _ in loud.seen)


def test_native_talkers_sit_in_tournaments_and_the_benchmark(tmp_path: Path) -> None:
    path = _talker_file(tmp_path)
    name = f"claims+native:learned:{path}"
    spec = GameSpec("base", 5, ("claims:heuristic", "claims:heuristic"), seed=7, insert=name)
    records = play(spec)
    assert records and any(r["claims"] for r in records)
    with pytest.raises(ValueError, match="native talker"):
        play(GameSpec("base", 5, (name, "claims:heuristic"), seed=7))
    with pytest.raises(ValueError, match="does not play the claims game by itself"):
        make_native_talker("heuristic", CLAIMS5)
    with pytest.raises(ValueError, match="valid deaf, mute"):
        make_native_talker(f"learned:{path}", CLAIMS5, options=("native", "fit"))
    p = protocol("base-5")
    assert benchmark_name(f"learned:{path}", p) == name  # a claims network talks in the benchmark
    assert arm_name(name, "deaf") == f"claims+native+deaf:learned:{path}"
    assert arm_name(name, "mute") == f"claims+native+mute:learned:{path}"
    plain = export_npz(Policy(GameConfig(num_players=5), hidden=8), GameConfig(num_players=5), tmp_path / "q.npz")
    assert benchmark_name(f"learned:{plain}", p) == f"claims+mute:learned:{plain}"  # one without claims is silent


def test_league_names_talk_only_under_the_claims_rule() -> None:
    assert talking("heuristic", CLAIMS5) == "claims:heuristic"
    assert talking("claims+fit:bayes", CLAIMS5) == "claims+fit:bayes"
    assert talking("heuristic", GameConfig(num_players=5)) == "heuristic"
    assert League(CLAIMS5, ["heuristic", "bayes"], 2).scripted == ["claims:heuristic", "claims:bayes"]


# ---- search under the claims rule (issue 36 part 2a) ----------------------------------------------------------------
def _claims_decision(seed: int, path: Path) -> tuple[Any, np.ndarray, np.ndarray, SearchAgent]:
    """A claims game (random moves, claims included) at a decision of seat 0 with 3+ legal moves after claims were
    made, and a claims search agent that followed seat 0 there."""
    env = raw_env(num_players=5, claims=True)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    agent = SearchAgent(CLAIMS5, rollouts=12, candidates=4, blueprint=path)
    agent.reset(0, 5, seed=9)
    a = layout(CLAIMS5).game_actions
    steps = 0
    for name in env.agent_iter(2000):
        obs, _, term, trunc, _ = env.last()
        assert not (term or trunc)
        mask = obs["action_mask"]
        said = obs["observation"][-layout(CLAIMS5).size :][layout(CLAIMS5).slices["history"]].any()
        if name == env.possible_agents[0]:
            if steps >= 20 and said and mask.sum() >= 3 and mask[:a].any():
                return env.unwrapped.game, obs["observation"], mask, agent
            agent.observe(obs["observation"])
        legal = np.flatnonzero(mask)
        claims = legal[legal >= a]
        pick = claims if claims.size and rng.random() < 0.4 else legal
        env.step(int(rng.choice(pick)))
        steps += 1
    raise AssertionError("no decision point found")


def test_claims_search_is_deterministic_and_blind_to_resampled_hidden_state(tmp_path: Path) -> None:
    path = _talker_file(tmp_path)
    state, obs, mask, agent = _claims_decision(3, path)
    lay = layout(CLAIMS5)
    size = observation_layout(CLAIMS5).size
    assert np.array_equal(encode_observation(state, 0), obs[:size])
    a1, a2 = copy.deepcopy(agent), copy.deepcopy(agent)
    first = a1.act(obs, mask)
    assert mask[first] and a2.act(obs, mask) == first
    assert a1.last_stats["values"] == a2.last_stats["values"] and a1.last_stats["rollouts"] == 12
    assert any(c >= lay.game_actions for c in a1.last_stats["values"])  # claims were among the candidates
    rng = np.random.default_rng(7)
    for _ in range(3):
        other = RESAMPLERS["base"](state, 0, rng)
        assert not np.array_equal(other.hands[1:], state.hands[1:])
        o2 = np.concatenate([encode_observation(other, 0), obs[size:]])  # the claims are public: the same block
        m2 = np.concatenate([legal_action_mask(other).astype(np.int8), mask[lay.game_actions :]])
        b = copy.deepcopy(agent)
        assert b.act(o2, m2) == first and b.last_stats["values"] == a1.last_stats["values"]


def test_claims_search_talks_in_tournaments_and_refuses_what_it_cannot_do(tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    path = _talker_file(tmp_path)
    spec = GameSpec("base", 5, ("claims:heuristic", "claims:heuristic"), seed=11,
                    insert=f"claims+native:search:8,blueprint={path}")  # fmt: skip
    records = play(spec)
    assert records
    with pytest.raises(ValueError, match="none is shipped for base at 10 players: give blueprint=PATH"):
        make_agent("search:8", GameConfig(num_players=10, claims=True))
    with pytest.raises(ValueError, match="trained without claims"):
        plain = export_npz(Policy(GameConfig(num_players=5), hidden=8), GameConfig(num_players=5), tmp_path / "q.npz")
        make_agent(f"search:8,blueprint={plain}", CLAIMS5)
    with pytest.raises(ValueError, match="not available under the claims rule"):
        make_agent(f"search:8,blueprint={path},depth=4", CLAIMS5)
    # its benchmark: seconds per searched move and the share of claims among them; no claims network, one line
    from agents.search import bench_claims, main

    r = bench_claims(CLAIMS5, 1, 5, rollouts=4, candidates=2, blueprint=path)
    assert r["moves"] > 5 and 0 <= r["claim_share"] <= 1 and r["median_s"] > 0
    with pytest.raises(SystemExit):
        main(["--bench", "--claims", "--game", "base:10", "--games", "1"])
    assert "give blueprint=PATH" in capsys.readouterr().err


def test_shipped_talker_lookup(tmp_path: Path) -> None:
    from agents.learned import NoShippedPolicyError, shipped_talker_path

    with pytest.raises(NoShippedPolicyError, match=r"no talker is shipped for game 'base' at 5 players .* none"):
        shipped_talker_path(CLAIMS5, tmp_path)
    path = _talker_file(tmp_path)
    path.rename(tmp_path / "base-5p.npz")
    assert shipped_talker_path(CLAIMS5, tmp_path) == tmp_path / "base-5p.npz"
    with pytest.raises(NoShippedPolicyError, match=r"claims_per_turn=2; shipped \(one claim per turn\): base-5p"):
        shipped_talker_path(GameConfig(num_players=5, claims=True, claims_per_turn=2), tmp_path)
    with pytest.raises(NoShippedPolicyError, match="claims_per_turn=0"):
        shipped_talker_path(GameConfig(num_players=5), tmp_path)


def test_the_shipped_talker_is_learned_under_the_claims_rule() -> None:
    agent = make_agent("learned", CLAIMS5)
    assert isinstance(agent, LearnedAgent) and talks_natively(agent)
    assert agent.policy.path.name == "base-5p.npz" and agent.policy.path.parent.name == "talkers"
    assert make_agent("learned", GameConfig(num_players=5)).policy.path.parent.name == "policies"  # unchanged
    s = SearchAgent(CLAIMS5, rollouts=8)  # rolls the shipped talker out
    assert s.network is not None and s.network.path == agent.policy.path
    # the bluffing benchmark seats both talking where the talker is shipped, silent elsewhere
    assert benchmark_name("learned", protocol("base-5")) == "claims+native:learned"
    assert benchmark_name("search:32", protocol("base-5")) == "claims+native:search:32"
    assert benchmark_name("learned", protocol("duel")) == "claims+mute:learned"
    for game, players in (("base", 7), ("sab2", 6)):  # grown from the universal files (docs/claims.md)
        cfg = GameConfig(game=game, num_players=players, claims=True)  # type: ignore[arg-type]
        talker = make_agent("learned", cfg)
        assert isinstance(talker, LearnedAgent) and talks_natively(talker)
        assert talker.policy.path.name == f"{game}-{players}p.npz" and talker.policy.path.parent.name == "talkers"
        name = f"{game}-{players}"
        assert benchmark_name("learned", protocol(name)) == "claims+native:learned"


def test_talk_table_reads_a_claims_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from experiments.train.selfplay import talk

    cols = ["iteration", "decisions", "win_miner", "win_saboteur"]
    for r in ("miner", "saboteur"):
        cols += [f"claims_per_decision_{r}", f"lie_rate_{r}", *[f"{k}_claims_{r}" for k in talk.KINDS]]
    path = tmp_path / "progress.csv"

    def row(it: int, rate: float) -> list[str]:
        vals = {"iteration": it, "decisions": it * 100, "win_miner": 0.5, "win_saboteur": 0.25}
        for r in ("miner", "saboteur"):
            vals |= {f"claims_per_decision_{r}": rate, f"lie_rate_{r}": "nan" if it == 2 else 0.5,
                     f"goal_claims_{r}": 3, f"accuse_claims_{r}": 1, f"clear_claims_{r}": 0, f"suspect_claims_{r}": 0}
        return [str(vals[c]) for c in cols]

    # a stale row of an earlier run (iteration 9) before this run's rows 1..4
    lines = [cols, row(9, 0.9), row(1, 0.1), row(2, 0.3), row(3, 0.2), row(4, 0.4)]
    path.write_text("\n".join(",".join(x) for x in lines) + "\n")
    assert talk.main([str(path), "--windows", "2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[2].startswith("| 100 | 0.200 | 0.200 | 0.50 | 0.50 | 75% / 25% / 0% / 0% |")
    assert out[3].startswith("| 300 | 0.300 | 0.300 |")
    assert talk.main([str(path), "--windows", "9"]) == 2
    assert "windows=9 is out of range; valid: 1..4" in capsys.readouterr().err
    assert talk.main([str(path), "--windows", "2", "--roles", "saboteur"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].count("saboteur") == 4 and "miner" not in out[0]
    assert out[2].startswith("| 100 | 0.200 | 0.50 | 75% / 25% / 0% / 0% | 0.250 |")
    assert talk.main([str(path), "--roles", "boss"]) == 2
    assert "roles ['boss'] are not in this run; valid: miner, saboteur" in capsys.readouterr().err
    plain = tmp_path / "plain.csv"
    plain.write_text("iteration,decisions\n1,100\n")
    assert talk.main([str(plain)]) == 2
    assert "not the progress.csv of a run with --claims" in capsys.readouterr().err


@pytest.mark.parametrize(("game", "players"), [("base", 7), ("sab2", 6)])
def test_a_claims_network_grows_from_the_shipped_universal_file(game: str, players: int) -> None:
    """``--init`` with a universal file: the network starts as the file specialized to the count (its input scale
    carried into the first layer), deaf to claims; a one-head file (Saboteur 2's) starts every role head."""
    plain_cfg = GameConfig(game=game, num_players=players)  # type: ignore[arg-type]
    talk_cfg = GameConfig(game=game, num_players=players, claims=True)  # type: ignore[arg-type]
    path = f"agents/policies/{game}-all.npz"
    ref = NumpyPolicy(path).for_config(plain_cfg)
    grown = Policy(talk_cfg, hidden=int(ref.meta["hidden"]), role_heads=True)
    assert grown.num_heads > ref.num_heads or game == "base"
    load_npz(grown, path, talk_cfg)
    env = raw_env(game=game, num_players=players, claims=True)
    env.reset(seed=3)
    for _ in range(3 * players):  # a few turns in: tunnels, tools and hands that differ from the deal
        env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
    obs = np.stack([env.observe(a)["observation"] for a in env.possible_agents]).astype(np.float32)
    n = observation_layout(plain_cfg).size
    want, v_want = ref.forward(obs[:, :n])
    obs[:, n:] = np.random.default_rng(0).random((players, obs.shape[1] - n))  # whatever was said: not heard yet
    with torch.no_grad():
        got, v_got = grown(torch.from_numpy(obs))
    a = num_actions(plain_cfg)
    np.testing.assert_allclose(got[:, :a].numpy(), want, atol=2e-3, rtol=1e-3)
    np.testing.assert_allclose(v_got.numpy(), v_want, atol=2e-3, rtol=1e-3)


def test_init_carries_a_files_own_input_scale_into_the_first_layer(tmp_path: Path) -> None:
    """A file whose stored input scale differs from this count's (same function: scale x2, first-layer rows /2)
    loads as the same network."""
    cfg = GameConfig(num_players=5)
    torch.manual_seed(6)
    src = Policy(cfg, hidden=8, role_heads=True)
    path = export_npz(src, cfg, tmp_path / "p.npz")
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    rows = np.arange(0, arrays["scale"].size, 3)
    arrays["scale"][rows] *= 2.0
    arrays["w0"][rows] /= 2.0
    np.savez(tmp_path / "q.npz", **arrays)
    dst = Policy(cfg, hidden=8, role_heads=True)
    load_npz(dst, tmp_path / "q.npz", cfg)
    env = raw_env(num_players=5)
    env.reset(seed=1)
    obs = torch.from_numpy(np.stack([env.observe(a)["observation"] for a in env.possible_agents]))
    with torch.no_grad():
        (want, v_want), (got, v_got) = src(obs), dst(obs)
    assert torch.allclose(got, want, atol=1e-5) and torch.allclose(v_got, v_want, atol=1e-5)
