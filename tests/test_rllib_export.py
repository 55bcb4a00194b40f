"""An RLlib policy exported to the agents.learned .npz format plays exactly as the RLlib module (needs the ``ray``
extra, installed by CI; no Ray cluster: the module is built and saved in-process)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("ray.rllib")
torch = pytest.importorskip("torch")

from agents import make_agent  # noqa: E402
from agents.learned import NumpyPolicy  # noqa: E402
from experiments.train.rllib import MODULE_DIR, SaboteurMultiAgentEnv, export_npz, main  # noqa: E402
from saboteur_env import GameConfig, raw_env  # noqa: E402


def _module(players: int, hidden: int, share: bool = False):  # type: ignore[no-untyped-def]
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

    env = SaboteurMultiAgentEnv({"num_players": players})
    spec = RLModuleSpec(module_class=ActionMaskingTorchRLModule, observation_space=env.observation_spaces["player_0"],
                        action_space=env.action_spaces["player_0"],
                        model_config={"fcnet_hiddens": [hidden, hidden], "head_fcnet_hiddens": [],
                                      "vf_share_layers": share})  # fmt: skip
    return spec.build(), env


@pytest.mark.parametrize("share", [False, True])
def test_exported_policy_has_the_rllib_modules_logits_and_plays_as_an_agent(tmp_path: Path, share: bool) -> None:
    torch.manual_seed(0)
    module, env = _module(4, 16, share)
    module.save_to_path(str(tmp_path.joinpath(*MODULE_DIR)))
    path = export_npz(tmp_path, tmp_path / "policy.npz", 4)
    policy = NumpyPolicy(path)
    obs_dict, _ = env.reset(seed=3)
    rng = np.random.default_rng(1)
    for _ in range(20):  # observations of a real game
        ((agent, o),) = obs_dict.items()
        with torch.no_grad():
            out = module.forward_inference({"obs": {k: torch.from_numpy(v[None]) for k, v in o.items()}})
        ref = out["action_dist_inputs"][0].numpy()
        legal = np.flatnonzero(o["action_mask"])
        logits, value = policy.forward(o["observations"])
        # RLlib adds log(mask) (clamped) to the logits: on the legal actions they are the policy's own
        np.testing.assert_allclose(logits[0, legal], ref[legal], rtol=1e-5, atol=1e-5)
        if share:
            np.testing.assert_allclose(value[0], out["vf_preds"][0].numpy() if "vf_preds" in out else
                                       module.compute_values({"obs": {k: torch.from_numpy(v[None]) for k, v in
                                                                      o.items()}})[0].detach().numpy(),
                                       rtol=1e-5, atol=1e-5)  # fmt: skip
        obs_dict, *_ = env.step({agent: int(legal[rng.integers(legal.size)])})
        if env.game.game_over:
            break
    agent = make_agent(f"learned:{path}", GameConfig(num_players=4))  # numpy only from here on
    e = raw_env(num_players=4)
    e.reset(seed=5)
    agent.reset(0, 4, 0)
    for _name in e.agent_iter():
        ob, _, term, trunc, _ = e.last()
        e.step(None if term or trunc else agent.act(ob["observation"], ob["action_mask"]))
    assert all(e.terminations.values())


def test_export_refuses_what_it_cannot_export(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ValueError, match="not an RLlib checkpoint"):
        export_npz(tmp_path, tmp_path / "x.npz", 4)
    module, _ = _module(4, 8)
    module.save_to_path(str(tmp_path.joinpath(*MODULE_DIR)))
    with pytest.raises(ValueError, match="do not fit the 5-player game"):
        export_npz(tmp_path, tmp_path / "x.npz", 5)
    with pytest.raises(SystemExit):
        main(["--export-npz", str(tmp_path / "x.npz")])
    assert "needs --out" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--out", str(tmp_path), "--export-only"])
    assert "needs --export-npz" in capsys.readouterr().err
    assert main(["--players", "4", "--out", str(tmp_path), "--export-npz", str(tmp_path / "ok.npz"),
                 "--export-only"]) == 0  # fmt: skip
    assert NumpyPolicy(tmp_path / "ok.npz").meta["source"] == "rllib"
