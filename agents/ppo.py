"""A trained MaskablePPO policy as a ladder agent (``make_agent("ppo:path/to/model.zip", config)``).

Needs the ``train`` extra (``pip install -e ".[train]"``) with torch >= 2.6, whose ``weights_only`` loading is safe.

Model files are this project's own format, loaded without unpickling anything: a zip archive holding

* ``meta.json`` - plain JSON: format name and version, the game config the policy was trained for (with its rules
  version, observation size and action count), the network architecture (layer widths, activation name), the PPO
  hyperparameters, timesteps trained, training options and package versions;
* ``policy.pt`` - the policy's ``state_dict`` (tensors only), read with ``torch.load(weights_only=True)``;
* ``optimizer.pt`` - the Adam state (tensors and numbers), read the same way, only to continue training.

The observation/action spaces are rebuilt from the game config and the network from the architecture in
``meta.json``, so no Python object stored in the file is ever constructed. stable-baselines3's native zips
(``model.save``) are refused: their ``data`` entry holds cloudpickled objects that run code as they load. Convert a
trusted one once with ``python -m experiments.train.sb3 --convert OLD.zip --trust-model-file``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import math
import os
import pickle
import re
import warnings
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard

import numpy as np
from numpy.typing import NDArray

from agents.files import FileRefusedError, open_regular
from saboteur_env import GameConfig, __version__, num_actions, observation_layout

FORMAT = "saboteur-env/maskable-ppo"
FORMAT_VERSION = 1
META, POLICY, OPTIMIZER = "meta.json", "policy.pt", "optimizer.pt"
# Bounds on what a file may ask us to read or allocate, so a crafted one cannot exhaust memory.
MAX_META_BYTES = 1 << 20
MAX_WEIGHTS_BYTES = 1 << 30
MAX_FILE_BYTES = MAX_META_BYTES + 2 * MAX_WEIGHTS_BYTES + (1 << 20)  # meta, policy, optimizer and the zip directory
MAX_LAYERS, MAX_WIDTH = 8, 4096
MAX_COUNT = 1 << 20  # n_steps, batch_size, n_epochs: the rollout buffer is n_steps observations
MIN_TORCH = (2, 6)  # the first torch whose weights_only unpickler has no known way to run code
# torch.nn class per activation name; only these are built (a name never reaches getattr unchecked).
ACTIVATIONS = {"tanh": "Tanh", "relu": "ReLU", "elu": "ELU", "leaky_relu": "LeakyReLU", "gelu": "GELU", "silu": "SiLU"}
# Config fields that fix what the observation and action indices mean: a model plays only games that agree on them.
LAYOUT_FIELDS = ("game", "num_players", "margin", "history_length", "duel_layout")
# MaskablePPO constructor arguments kept for continuing training: name -> kind.
HYPERPARAMETERS = {
    "learning_rate": "float", "n_steps": "count", "batch_size": "count", "n_epochs": "count", "gamma": "float",
    "gae_lambda": "float", "clip_range": "float", "ent_coef": "float", "vf_coef": "float", "max_grad_norm": "float",
    "normalize_advantage": "bool", "target_kl": "float|None",
}  # fmt: skip


class ModelFileError(ValueError):
    """A model file that is not loaded: not a model, a native stable-baselines3 zip, corrupt, or for another game."""

    def __init__(self, path: str | Path, problem: str) -> None:
        super().__init__(f"model file {path}: {problem}")
        self.path = Path(path)
        self.problem = problem

    def __reduce__(self) -> tuple[type, tuple[Path, str]]:
        # Rebuilt from both arguments, so the error survives a tournament worker's result pipe.
        return type(self), (self.path, self.problem)


@dataclass(frozen=True)
class ModelMeta:
    """The plain-JSON description of a saved model (``meta.json``)."""

    config: GameConfig
    observation_size: int
    num_actions: int
    net_arch: dict[str, list[int]]  # {"pi": widths, "vf": widths}
    activation: str  # a key of ACTIVATIONS
    hyperparameters: dict[str, Any]  # keys of HYPERPARAMETERS
    num_timesteps: int
    training: dict[str, Any]  # how it was trained (opponents, shaping, seed, ...): plain values, informational
    rules_version: str  # the config's rules version when it was saved
    versions: dict[str, str]  # package versions when it was saved (informational)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "algorithm": "MaskablePPO",
            "game_config": config_fields(self.config),
            "rules_version": self.rules_version,
            "observation_size": self.observation_size,
            "num_actions": self.num_actions,
            "policy": {"net_arch": self.net_arch, "activation": self.activation},
            "hyperparameters": self.hyperparameters,
            "num_timesteps": self.num_timesteps,
            "training": self.training,
            "versions": self.versions,
        }

    @classmethod
    def from_json(cls, path: Path, data: Any) -> ModelMeta:
        """Validate every field of a parsed ``meta.json`` (types, ranges, sizes); raise :class:`ModelFileError`."""

        def bad(problem: str) -> ModelFileError:
            return ModelFileError(path, f"meta.json {problem}")

        if not isinstance(data, dict):
            raise bad("is not a JSON object")
        if data.get("format") != FORMAT:
            raise bad(f"has format {data.get('format')!r}; expected {FORMAT!r}")
        if data.get("format_version") != FORMAT_VERSION:
            raise bad(f"has format_version {data.get('format_version')!r}; this saboteur-env reads {FORMAT_VERSION}")
        fields = data.get("game_config")
        if not isinstance(fields, dict) or not all(_is_plain(v) for v in fields.values()):
            raise bad("game_config must be an object of plain values")
        try:
            config = GameConfig(**fields)
        except (TypeError, ValueError) as err:
            raise bad(f"game_config is not a valid game: {err}") from None
        obs_size, n_actions = data.get("observation_size"), data.get("num_actions")
        if not _is_count(obs_size) or not _is_count(n_actions):
            raise bad("observation_size and num_actions must be positive integers")
        expected = (observation_layout(config).size, num_actions(config))
        if (obs_size, n_actions) != expected:
            raise bad(
                f"says {obs_size} observation values and {n_actions} actions, but its game config gives {expected[0]} "
                f"and {expected[1]} in saboteur-env {__version__} (saved by saboteur-env "
                f"{_versions(data).get('saboteur_env', '?')}, whose encoding differs)"
            )
        policy = data.get("policy")
        if not isinstance(policy, dict):
            raise bad("has no policy object")
        net_arch = policy.get("net_arch")
        if (
            not isinstance(net_arch, dict)
            or set(net_arch) != {"pi", "vf"}
            or not all(
                isinstance(w, list) and len(w) <= MAX_LAYERS and all(_is_count(x) and x <= MAX_WIDTH for x in w)
                for w in net_arch.values()
            )
        ):
            raise bad(
                f"policy.net_arch must be {{'pi': [...], 'vf': [...]}}, each at most {MAX_LAYERS} widths <= {MAX_WIDTH}"
            )
        activation = policy.get("activation")
        if activation not in ACTIVATIONS:
            raise bad(f"policy.activation {activation!r} is not one of {', '.join(ACTIVATIONS)}")
        hyper = data.get("hyperparameters")
        if not isinstance(hyper, dict) or set(hyper) != set(HYPERPARAMETERS):
            raise bad(f"hyperparameters must have exactly the keys {', '.join(HYPERPARAMETERS)}")
        for name, kind in HYPERPARAMETERS.items():
            if not _is_kind(hyper[name], kind):
                raise bad(f"hyperparameters.{name}={hyper[name]!r} is not a valid {kind}")
        timesteps = data.get("num_timesteps")
        if not isinstance(timesteps, int) or isinstance(timesteps, bool) or timesteps < 0:
            raise bad("num_timesteps must be a non-negative integer")
        training = data.get("training", {})
        if not isinstance(training, dict) or not all(_is_plain(v) for v in training.values()):
            raise bad("training must be an object of plain values")
        rules_version = data.get("rules_version")
        if not isinstance(rules_version, str):
            raise bad("rules_version must be a string")
        return cls(config=config, observation_size=obs_size, num_actions=n_actions,
                   net_arch={k: list(v) for k, v in net_arch.items()}, activation=activation, hyperparameters=hyper,
                   num_timesteps=timesteps, training=training, rules_version=rules_version,
                   versions=_versions(data))  # fmt: skip


def config_fields(config: GameConfig) -> dict[str, Any]:
    """The fields of a game config as plain values (``GameConfig(**config_fields(c)) == c``)."""
    return {f.name: getattr(config, f.name) for f in dataclasses.fields(config)}


def _is_plain(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def _is_count(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _is_kind(value: Any, kind: str) -> bool:
    if kind == "count":
        return _is_count(value) and value <= MAX_COUNT
    if kind == "bool":
        return isinstance(value, bool)
    if value is None:
        return kind == "float|None"
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _versions(data: dict[str, Any]) -> dict[str, str]:
    versions = data.get("versions")
    return {str(k): str(v) for k, v in versions.items()} if isinstance(versions, dict) else {}


# ---- reading ----


@contextlib.contextmanager
def _open_archive(path: Path) -> Iterator[zipfile.ZipFile]:
    # A regular file of bounded size only: a FIFO would block, /dev/zero read forever, a directory fail deep in zipfile.
    try:
        fh = open_regular(path, MAX_FILE_BYTES)
    except FileRefusedError as err:
        raise ModelFileError(path, err.problem) from None
    with fh:
        head = fh.read(4)
        fh.seek(0)
        try:
            archive = zipfile.ZipFile(fh)
        except (zipfile.BadZipFile, OSError, EOFError, ValueError):
            if head.startswith(b"PK"):
                raise ModelFileError(path, "is a corrupt or truncated zip archive") from None
            raise ModelFileError(path, "is not a model file (not a zip archive)") from None
        with archive:
            yield archive


def _read_member(archive: zipfile.ZipFile, path: Path, name: str, limit: int) -> bytes:
    info = archive.getinfo(name)
    if info.file_size > limit:
        raise ModelFileError(path, f"{name} is {info.file_size} bytes; at most {limit} are read")
    try:
        # zipfile stops at the declared size and checks the CRC, so a lying header cannot make it read more.
        return archive.read(info)
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError, RuntimeError) as err:
        raise ModelFileError(path, f"{name} is corrupt or truncated ({err})") from None


def _native(names: set[str]) -> bool:
    return META not in names and "data" in names and "policy.pth" in names


def is_sb3_native(path: str | Path) -> bool:
    """Whether ``path`` looks like a stable-baselines3 ``model.save`` zip (only the member names are read)."""
    try:
        with _open_archive(Path(path)) as archive:
            return _native(set(archive.namelist()))
    except ModelFileError:
        return False


def _check_members(archive: zipfile.ZipFile, path: Path) -> None:
    names = set(archive.namelist())
    if META in names:
        return
    if _native(names):
        raise ModelFileError(
            path,
            "is a stable-baselines3 native zip (MaskablePPO.save); it is not loaded because its 'data' entry holds "
            "pickled Python objects that run code when unpickled. If you trust where it came from, convert it once: "
            f"python -m experiments.train.sb3 --convert {path} --trust-model-file --players N --out DIR",
        )
    shown = ", ".join(sorted(names)[:8]) or "nothing"
    raise ModelFileError(path, f"is not a saboteur-env model file (no {META}; the zip holds {shown})")


def read_meta(path: str | Path) -> ModelMeta:
    """The validated ``meta.json`` of a model file (no torch needed, nothing unpickled)."""
    path = Path(path)
    with _open_archive(path) as archive:
        _check_members(archive, path)
        raw = _read_member(archive, path, META, MAX_META_BYTES)
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ModelFileError(path, f"meta.json is not valid UTF-8 JSON ({err})") from None
    return ModelMeta.from_json(path, data)


def require_safe_torch(version: str) -> None:
    """Raise ``RuntimeError`` for a torch whose ``weights_only`` loading is known to be bypassable."""
    major, minor = (int(part) for part in re.findall(r"\d+", version)[:2])
    if (major, minor) < MIN_TORCH:
        raise RuntimeError(
            f"torch {version} cannot load model files safely: torch.load(weights_only=True) could be made to run "
            f"code before torch {'.'.join(map(str, MIN_TORCH))} (CVE-2025-32434); upgrade torch"
        )


def read_weights(path: str | Path, member: str = POLICY) -> Any:
    """A weights member (``policy.pt`` or ``optimizer.pt``) loaded with ``torch.load(weights_only=True)``."""
    import torch

    require_safe_torch(torch.__version__)
    path = Path(path)
    with _open_archive(path) as archive:
        _check_members(archive, path)
        if member not in archive.namelist():
            raise ModelFileError(path, f"has no {member}")
        raw = _read_member(archive, path, member, MAX_WEIGHTS_BYTES)
    try:
        # weights_only: torch's restricted unpickler builds tensors and plain containers only, never other objects.
        return torch.load(io.BytesIO(raw), map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as err:
        first = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise ModelFileError(
            path, f"{member} holds objects other than tensors; refused, as unpickling them could run code ({first})"
        ) from None
    except Exception as err:  # torch reports a damaged archive as RuntimeError, EOFError, ValueError, ...
        raise ModelFileError(path, f"{member} is corrupt ({type(err).__name__}: {err})") from None


def check_compatible(meta: ModelMeta, config: GameConfig, path: str | Path) -> None:
    """Raise :class:`ModelFileError` unless the model was trained for games with ``config``'s layout."""
    diffs = [
        f"{name}={getattr(meta.config, name)!r} (here {getattr(config, name)!r})"
        for name in LAYOUT_FIELDS
        if getattr(meta.config, name) != getattr(config, name)
    ]
    if diffs:
        raise ModelFileError(path, f"was trained for another game: {', '.join(diffs)}")
    size = observation_layout(config).size
    if (meta.observation_size, meta.num_actions) != (size, num_actions(config)):
        raise ModelFileError(
            path,
            f"expects {meta.observation_size} observation values and {meta.num_actions} actions; "
            f"{config} gives {size} and {num_actions(config)}",
        )
    if meta.rules_version != config.rules_version:
        warnings.warn(f"model {path} was trained under rules {meta.rules_version}; playing {config.rules_version}",
                      stacklevel=3)  # fmt: skip


def spaces_for(config: GameConfig) -> tuple[Any, Any]:
    """The observation and action spaces a learner seat has in ``config`` (those of ``SingleSeatEnv``)."""
    from saboteur_env import raw_env

    env = raw_env(**config_fields(config))
    seat = env.possible_agents[0]
    return env.observation_space(seat)["observation"], env.action_space(seat)


def policy_kwargs(meta: ModelMeta) -> dict[str, Any]:
    """``MaskableActorCriticPolicy`` keyword arguments for the architecture in ``meta``."""
    from torch import nn

    return {"net_arch": {k: list(v) for k, v in meta.net_arch.items()},
            "activation_fn": getattr(nn, ACTIVATIONS[meta.activation])}  # fmt: skip


def load_state(policy: Any, state: Any, path: str | Path) -> None:
    """Copy a ``policy.pt`` state into ``policy``, after checking names, shapes and values."""
    import torch

    expected = policy.state_dict()
    if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise ModelFileError(path, "policy.pt is not a mapping of tensor names to tensors")
    if set(state) != set(expected):
        missing, extra = sorted(set(expected) - set(state)), sorted(set(state) - set(expected))
        raise ModelFileError(path, f"policy.pt does not match the architecture in meta.json "
                                   f"(missing {missing[:3]}, unexpected {extra[:3]})")  # fmt: skip
    for name, tensor in state.items():
        if tensor.shape != expected[name].shape:
            raise ModelFileError(path, f"policy.pt {name} has shape {tuple(tensor.shape)}; the architecture in "
                                       f"meta.json needs {tuple(expected[name].shape)}")  # fmt: skip
        if not tensor.is_floating_point() or not bool(torch.isfinite(tensor).all()):
            raise ModelFileError(path, f"policy.pt {name} is not finite floating point (a corrupt or diverged model)")
    policy.load_state_dict(state, strict=True)


def build_policy(meta: ModelMeta, state: Any, path: str | Path) -> Any:
    """An inference-only ``MaskableActorCriticPolicy`` from the architecture in ``meta`` and the weights ``state``."""
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    observation_space, action_space = spaces_for(meta.config)
    policy = MaskableActorCriticPolicy(observation_space, action_space, lambda _: 0.0, **policy_kwargs(meta))
    load_state(policy, state, path)
    policy.set_training_mode(False)
    return policy


@dataclass(frozen=True)
class LoadedModel:
    """A model file's description and its rebuilt policy, shared by every agent of the process."""

    path: Path
    meta: ModelMeta
    policy: Any  # sb3_contrib MaskableActorCriticPolicy, in eval mode


_MODELS: dict[tuple[str, int, int], LoadedModel] = {}  # (path, mtime_ns, size) -> model; one load per process


def load_model(path: str | Path) -> LoadedModel:
    """The model at ``path``, loaded once per process (inference only: it is never trained further)."""
    path = Path(path)
    stat = path.stat()
    key = (str(path.resolve()), stat.st_mtime_ns, stat.st_size)
    if key not in _MODELS:
        meta = read_meta(path)
        _MODELS[key] = LoadedModel(path, meta, build_policy(meta, read_weights(path, POLICY), path))
    return _MODELS[key]


# ---- writing ----


def _schedule_value(schedule: Any, name: str) -> float:
    start, end = float(schedule(1.0)), float(schedule(0.0))
    if start != end:
        raise ValueError(f"{name} is a schedule ({start} -> {end}); the model format keeps constant values only")
    return start


def model_meta(model: Any, config: GameConfig, training: dict[str, Any]) -> ModelMeta:
    """The description of a MaskablePPO ``model`` trained on ``config``; ``ValueError`` if the format cannot hold it."""
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
    from stable_baselines3.common.torch_layers import FlattenExtractor

    policy = model.policy
    if type(policy) is not MaskableActorCriticPolicy or not isinstance(policy.features_extractor, FlattenExtractor) \
            or not policy.share_features_extractor:  # fmt: skip
        raise ValueError("only MaskablePPO 'MlpPolicy' models with the default feature extractor can be saved")
    by_class = {cls: name for name, cls in ACTIVATIONS.items()}
    activation = by_class.get(policy.activation_fn.__name__)
    if activation is None:
        raise ValueError(f"activation {policy.activation_fn.__name__} is not one of {', '.join(ACTIVATIONS.values())}")
    if getattr(model, "clip_range_vf", None) is not None or getattr(model, "use_sde", False):
        raise ValueError("clip_range_vf and use_sde are not kept by the model format")
    arch = policy.net_arch
    net_arch = {"pi": list(arch.get("pi", [])), "vf": list(arch.get("vf", []))} if isinstance(arch, dict) \
        else {"pi": list(arch), "vf": list(arch)}  # fmt: skip
    size = observation_layout(config).size
    if model.observation_space.shape != (size,) or int(model.action_space.n) != num_actions(config):
        raise ValueError(
            f"the model takes observations of shape {model.observation_space.shape} and {model.action_space}; "
            f"a {config.num_players}-player {config.game!r} game has ({size},) and Discrete({num_actions(config)})"
        )
    import sb3_contrib
    import stable_baselines3
    import torch

    hyper = {
        "learning_rate": _schedule_value(model.lr_schedule, "learning_rate"), "n_steps": int(model.n_steps),
        "batch_size": int(model.batch_size), "n_epochs": int(model.n_epochs), "gamma": float(model.gamma),
        "gae_lambda": float(model.gae_lambda), "clip_range": _schedule_value(model.clip_range, "clip_range"),
        "ent_coef": float(model.ent_coef), "vf_coef": float(model.vf_coef), "max_grad_norm": float(model.max_grad_norm),
        "normalize_advantage": bool(model.normalize_advantage),
        "target_kl": None if model.target_kl is None else float(model.target_kl),
    }  # fmt: skip
    versions = {"saboteur_env": __version__, "stable_baselines3": stable_baselines3.__version__,
                "sb3_contrib": sb3_contrib.__version__, "torch": torch.__version__}  # fmt: skip
    return ModelMeta(config=config, observation_size=size, num_actions=num_actions(config), net_arch=net_arch,
                     activation=activation, hyperparameters=hyper, num_timesteps=int(model.num_timesteps),
                     training=training, rules_version=config.rules_version, versions=versions)  # fmt: skip


def save_model(model: Any, path: str | Path, config: GameConfig, training: dict[str, Any] | None = None) -> Path:
    """Write ``model`` (a MaskablePPO trained on ``config``) to ``path`` in the safe format; returns ``path``."""
    import torch

    path = Path(path)
    meta = model_meta(model, config, dict(training or {}))
    ModelMeta.from_json(path, json.loads(json.dumps(meta.to_json())))  # what we write must read back
    members = {META: json.dumps(meta.to_json(), indent=2, sort_keys=True).encode()}
    for name, state in ((POLICY, model.policy.state_dict()), (OPTIMIZER, model.policy.optimizer.state_dict())):
        buf = io.BytesIO()
        torch.save(state, buf)
        members[name] = buf.getvalue()
    path.parent.mkdir(parents=True, exist_ok=True)
    # Written beside the target and renamed: an interrupted save never leaves a truncated file under the real name.
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            for name, data in members.items():
                archive.writestr(name, data)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


# ---- the agent ----


class PPOAgent:
    """Plays the greedy (deterministic) or sampled action of a saved MaskablePPO policy.

    Sampling uses the agent's own generator (seeded by ``reset``), so it never touches torch's global RNG.
    """

    def __init__(self, path: str | Path, config: GameConfig, deterministic: bool = True) -> None:
        try:
            import sb3_contrib  # noqa: F401
        except ImportError as err:  # pragma: no cover - depends on the optional extra
            raise ImportError("ppo agents need the 'train' extra: pip install -e '.[train]'") from err
        path = Path(path)
        if not path.exists():
            raise FileNotFoundError(f"no model at {path}")
        self.model = load_model(path)
        check_compatible(self.model.meta, config, path)
        self.policy = self.model.policy
        self.config = config
        self.name = f"ppo:{path.name}"
        self.deterministic = deterministic
        self.rng = np.random.default_rng()

    def reset(self, seat: int, num_players: int, seed: int | None) -> None:
        self.rng = np.random.default_rng(seed)

    def action_logits(self, observation: NDArray[np.float32], action_mask: NDArray[np.int8]) -> NDArray[np.float64]:
        """The policy's logits with illegal actions at ``-inf`` (no torch distribution: this runs every decision)."""
        import torch

        mask = np.asarray(action_mask).astype(bool)
        with torch.no_grad():
            obs = torch.as_tensor(np.asarray(observation, dtype=np.float32)).reshape(1, -1)
            features = self.policy.extract_features(obs, self.policy.pi_features_extractor)
            logits = self.policy.action_net(self.policy.mlp_extractor.forward_actor(features))[0].numpy()
        return np.where(mask, logits.astype(np.float64), -np.inf)

    def act(self, observation: NDArray[np.float32], action_mask: NDArray[np.int8]) -> int:
        logits = self.action_logits(observation, action_mask)
        if not np.isfinite(logits).any():
            raise ValueError("act() needs a mask with at least one legal action")
        if self.deterministic:
            return int(np.argmax(logits))
        probs = np.exp(logits - logits.max())
        return int(self.rng.choice(probs.size, p=probs / probs.sum()))
