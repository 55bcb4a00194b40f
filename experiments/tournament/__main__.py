"""``python -m experiments.tournament``: the tournament command (:mod:`experiments.tournament.cli`)."""

import sys

from experiments.tournament.cli import main

sys.exit(main())
