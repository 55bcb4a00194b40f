"""Batched self-play PPO (issue 14; docs/selfplay.md): options (``args``), the torch policy and its numpy export
(``policy``), per-seat turn accounting (``rollout``), the trainer and ``python -m experiments.train.selfplay``
(``trainer``)."""
