"""Blueprint policies for batched rollouts (``saboteur_env.core.rollout``): the policy every seat plays inside the
``search`` agent's simulations, evaluated for hundreds of games in one numpy call.

* :class:`NetworkBlueprint` - a ``learned`` network (:class:`agents.learned.NumpyPolicy`) that reads only the
  observation: the trunk over all rows at once, then the logits of the legal entries only (a gather of the policy
  head's columns: a dozen legal actions among thousands), by the head of the row's role (the role one-hot of the
  observation, as :meth:`NumpyPolicy.forward` picks it).
* :class:`WeightsBlueprint` - the IS-MCTS rollout policy (``agents.ismcts.rollout_weights``): a fixed weight per
  action id, for the configurations without such a network.
* :class:`BeliefBlueprint` - a network that reads the base game's ``bayes`` belief features (the shipped 4-, 7-
  and 10-player files, or a universal file with features), every seat of every row with its own features from
  :class:`agents.base.batched_beliefs.BatchedBeliefs`, followed from the rows' event logs in the rollout loop
  (``begin`` / ``follow``): no per-game Python. The ``search`` agent uses it with ``beliefs=1``.

By default (:func:`rollout_blueprint`) a belief-feature prior is rolled out by a network that reads the observation
alone: the shipped one where it does, else the game's universal network (:mod:`agents.universal`, every player
count), else the rollout weights; the ``search`` agent still ranks its candidate moves with the shipped network and
the seat's own belief features (one seat, one observation per decision: cheap).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from agents.learned import (
    NoShippedPolicyError,
    NumpyPolicy,
    PolicyFileError,
    load_policy,
    shipped_path,
    shipped_paths,
    shipped_talker_path,
)
from saboteur_env import GameConfig

__all__ = ["BeliefBlueprint", "NetworkBlueprint", "WeightsBlueprint", "load_network", "rollout_blueprint"]


class _LegalHeads:
    """A network's policy heads evaluated at the legal entries only: the trunk over all rows, then a gather of the
    head columns of each legal action by the row's role head (a dozen legal actions among thousands)."""

    def __init__(self, policy: NumpyPolicy) -> None:
        self.policy = policy
        w = policy.w
        # Head weights action-major, one block per role head: the gather of a legal entry's column is one row.
        self._wt = np.ascontiguousarray(np.stack([w[f"pi_w{r}"].T for r in range(policy.num_heads)]))
        self._b = np.stack([w[f"pi_b{r}"] for r in range(policy.num_heads)])

    def _legal_logits(self, x: NDArray[np.float32], rows: NDArray[np.int64], cols: NDArray[np.int64]) -> NDArray[Any]:
        h, role = self.policy._hidden(x)
        e = h if not self.policy.embed else h @ self.policy.w["pe_w"] + self.policy.w["pe_b"]
        head = role[rows]
        return np.einsum("ij,ij->i", e[rows], self._wt[head, cols]) + self._b[head, cols]


class NetworkBlueprint(_LegalHeads):
    """A feature-free ``learned`` network as a batched rollout policy (see the module docstring)."""

    def __init__(self, policy: NumpyPolicy, config: GameConfig) -> None:
        policy.check_config(config)  # PolicyMismatchError (a ValueError) for another game, count or layout
        if policy.features:
            raise PolicyFileError(f"policy {policy.path} reads belief features ({policy.features!r}); a rollout "
                                  "blueprint reads the observation only")  # fmt: skip
        super().__init__(policy)
        self.name = f"network:{policy.path.name}"

    def logits(self, obs: NDArray[np.float32], rows: NDArray[np.int64], cols: NDArray[np.int64]) -> NDArray[Any]:
        return self._legal_logits(obs, rows, cols)


class BeliefBlueprint(_LegalHeads):
    """A ``learned`` network that reads the base game's ``bayes`` belief features, as a batched rollout policy: every
    seat of every row gets its features from :class:`~agents.base.batched_beliefs.BatchedBeliefs`, followed from the
    row's event log at each step (the rollout loop's ``begin`` / ``follow``), so the seats of a rollout grow
    suspicious of a saboteur as the seats of a real game do. :meth:`set_root` gives the public model and board the
    rows start from (a search's seat's own public follower); without one the rows start at a fresh round."""

    def __init__(self, policy: NumpyPolicy, config: GameConfig) -> None:
        from agents.base.batched_beliefs import BatchedBeliefs

        policy.check_config(config)
        if policy.features != "bayes" or config.game != "base":
            raise PolicyFileError(f"policy {policy.path} does not read the base game's 'bayes' features "
                                  f"(features={policy.features!r}, game={config.game!r})")  # fmt: skip
        super().__init__(policy)
        self.name = f"beliefs:{policy.path.name}"
        self.beliefs = BatchedBeliefs(config)
        self._root: tuple[NDArray[np.float64], NDArray[np.int16]] | None = None
        self._state: tuple[NDArray[Any], ...] = ()
        self._batch: Any = None
        self._n = 0

    def __getstate__(self) -> dict[str, Any]:
        # the last rollout's batch and row state are transient (and a batch holds compiled-core handles)
        return {**self.__dict__, "_state": (), "_batch": None, "_n": 0}

    def set_root(self, public_loglik: NDArray[np.float64], board: NDArray[np.int16]) -> None:
        """The public model's table and the public board every row of the next rollouts starts from."""
        self._root = (np.array(public_loglik, dtype=np.float64), np.array(board, dtype=np.int16))

    def begin(self, batch: Any) -> tuple[NDArray[Any], ...]:
        ll, board = self._root if self._root is not None else (None, None)
        self._state = self.beliefs.start(batch, ll, board)
        self._batch, self._n = batch, 0
        return self._state

    def follow(self, batch: Any, n: int) -> None:
        self.beliefs.follow(batch, n, self._state)
        self._batch, self._n = batch, n

    def logits(self, obs: NDArray[np.float32], rows: NDArray[np.int64], cols: NDArray[np.int64]) -> NDArray[Any]:
        n = obs.shape[0]
        if self._batch is None or self._n != n:
            raise RuntimeError("a belief blueprint plays inside core.rollout.rollout (begin / follow first)")
        feats = self.beliefs.features(self._batch, n, self._state)
        return self._legal_logits(np.concatenate([obs, feats], axis=1), rows, cols)


class WeightsBlueprint:
    """Fixed per-action weights as a rollout policy: ``logit = log(weight)`` (the observation is not read)."""

    def __init__(self, weights: NDArray[np.floating[Any]], name: str = "weights") -> None:
        w = np.asarray(weights, dtype=np.float64)
        if w.ndim != 1 or not (w > 0).all():
            raise ValueError("weights must be a 1-D array of positive numbers, one per action id")
        self._log = np.log(w)
        self.name = name

    def logits(self, obs: NDArray[np.float32], rows: NDArray[np.int64], cols: NDArray[np.int64]) -> NDArray[Any]:
        return self._log[cols]


def load_network(path: str | Path, config: GameConfig) -> NumpyPolicy:
    """The network in ``path`` checked against ``config`` (PolicyFileError / PolicyMismatchError: ValueErrors that
    name the file and what differs)."""
    return load_policy(path, config)


def shipped_network(config: GameConfig) -> NumpyPolicy | None:
    """The network shipped for ``config``'s game and player count (``agents/policies/``; under the claims rule the
    shipped talker, ``agents/talkers/``), or None."""
    try:
        return load_network(shipped_talker_path(config) if config.claims else shipped_path(config), config)
    except NoShippedPolicyError:
        return None
    except PolicyFileError:  # shipped for the count but another layout (margin, history, Duel geometry)
        return None


def rollout_blueprint(config: GameConfig, network: NumpyPolicy | None) -> NetworkBlueprint | WeightsBlueprint:
    """``network`` as the rollout policy if it reads only the observation; else (a shipped belief-feature network, or
    none) the first shipped observation-only network for the configuration, such as the game's universal file; else
    the IS-MCTS rollout weights."""
    if network is not None and not network.features:
        return NetworkBlueprint(network, config)
    for path in shipped_paths(config):
        try:
            other = load_network(path, config)
        except PolicyFileError:  # trained for another layout
            continue
        if not other.features:
            return NetworkBlueprint(other, config)
    from agents.ismcts import rollout_weights

    return WeightsBlueprint(rollout_weights(config))
