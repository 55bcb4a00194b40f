"""Language-model agents with a model that runs here: a local OpenAI-compatible server (:mod:`.local`) and the
share of valid moves with and without constrained answers (:mod:`.moves`; docs/text.md)."""
