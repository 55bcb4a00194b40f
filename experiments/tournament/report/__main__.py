"""``python -m experiments.tournament.report LOG_DIR ...`` (:mod:`experiments.tournament.report.build`)."""

import sys

from experiments.tournament.report.build import main

sys.exit(main())
