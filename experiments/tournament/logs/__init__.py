"""Tournament logs (``rounds.jsonl.gz``): the record format (``format``), reading (``read``), crash-safe writing,
merging and repair (``write``), and ``python -m experiments.tournament.logs verify | merge | repair`` (``cli``)."""
