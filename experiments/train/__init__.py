"""Training: batched self-play PPO (``selfplay``, ``league``), imitation (``imitate``), shipping the policies
(``ship``), Stable-Baselines3 (``sb3``), RLlib (``rllib``) and the behaviour tables (``behaviour``)."""
