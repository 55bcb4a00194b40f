"""``python -m experiments.train.selfplay --game base --players 5`` (:mod:`experiments.train.selfplay.trainer`)."""

import sys

from experiments.train.selfplay.trainer import main

sys.exit(main())
