"""``python -m experiments.tournament.logs verify | merge | repair`` (:mod:`experiments.tournament.logs.cli`)."""

import sys

from experiments.tournament.logs.cli import main

sys.exit(main())
