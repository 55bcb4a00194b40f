"""docs/integrations.md's snippets, executed as written (issue 38), and the library checks they stand on."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

DOC = Path(__file__).resolve().parent.parent / "docs" / "integrations.md"
# snippet -> (modules it needs, the extra that brings them, slow tier)
NEEDS = {
    "pettingzoo": ((), "", False),
    "gymnasium_vector": ((), "", False),
    "transitions": ((), "", False),
    "supersuit": (("supersuit",), "supersuit", False),
    "sb3": (("sb3_contrib", "stable_baselines3"), "train", True),
    "cleanrl": (("torch",), "train", True),
    "pufferlib": (("pufferlib",), "puffer", True),
    "tianshou": (("tianshou",), "tianshou", True),
    "torchrl": (("torchrl",), "torchrl", True),
    "rllib": (("ray.rllib", "torch"), "ray", True),
}


def snippets() -> dict[str, str]:
    text = DOC.read_text()
    return dict(re.findall(r"<!-- snippet: (\w+) -->\n```python\n(.*?)```", text, flags=re.S))


def test_integrations__every_snippet_is_tested():
    assert set(snippets()) == set(NEEDS)


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=[pytest.mark.slow] if slow else []) for n, (_, _, slow) in NEEDS.items()]
)
def test_integrations__snippet_runs(name):
    modules, extra, _ = NEEDS[name]
    for module in modules:
        pytest.importorskip(module, reason=f"needs the {extra} extra (pip install -e '.[{extra}]')")
    code = snippets()[name]
    exec(compile(code, f"docs/integrations.md:{name}", "exec"), {"__name__": f"snippet_{name}"})


def test_flat_obs__mask_in_infos_and_pettingzoo_api_test():
    """``obs_format="flat"``: the observation is the Box of the dict format's ``observation``; the acting agent's
    ``infos`` hold its mask (zeros for the others), the same as the dict format's; PettingZoo's api_test passes."""
    from pettingzoo.test import api_test

    from saboteur_env import raw_env

    for game, n in (("base", 3), ("sab2", 4), ("duel", 2)):
        flat, ref = raw_env(game=game, num_players=n, obs_format="flat"), raw_env(game=game, num_players=n)
        flat.reset(seed=4)
        ref.reset(seed=4)
        for _ in range(30):
            agent = flat.agent_selection
            obs, _, term, trunc, info = flat.last()
            want = ref.observe(agent)
            np.testing.assert_array_equal(obs, want["observation"])
            np.testing.assert_array_equal(info["action_mask"], want["action_mask"])
            assert obs in flat.observation_space(agent)
            for other in flat.agents:
                if other != agent:
                    assert not flat.infos[other]["action_mask"].any()
            action = None if term or trunc else int(np.flatnonzero(info["action_mask"])[0])
            flat.step(action)
            ref.step(action)
        api_test(raw_env(game=game, num_players=n, obs_format="flat"), num_cycles=20)


def test_single_seat_for_sb3__defaults():
    """``SingleSeatEnv()`` needs no argument (random opponents); ``for_sb3`` ends an illegal action's episode with
    -1 instead of raising; a bad ``obs_format`` names the valid ones."""
    from saboteur_env import ConfigError, SingleSeatEnv, raw_env

    env = SingleSeatEnv(num_players=3)
    obs, info = env.reset(seed=0)
    assert obs in env.observation_space and info["action_mask"].any()
    sb3 = SingleSeatEnv.for_sb3(num_players=3)
    sb3.reset(seed=0)
    _, reward, terminated, _, info = sb3.step(int(np.flatnonzero(~sb3.action_masks())[0]))
    assert (reward, terminated, info["illegal"]) == (-1.0, True, True)
    with pytest.raises(ConfigError, match="obs_format='box' is not valid; valid: 'dict', 'flat'"):
        raw_env(obs_format="box")
    with pytest.raises(ConfigError, match="claims=True needs opponents"):
        SingleSeatEnv(claims=True)
