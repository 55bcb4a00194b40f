"""``python -m experiments.bluff``: the bluffing benchmark command (:mod:`experiments.bluff.cli`)."""

import sys

from experiments.bluff.cli import main

sys.exit(main())
