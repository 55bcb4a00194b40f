"""``python -m experiments.bench``: the throughput benchmark (:mod:`experiments.bench.run`)."""

import sys

from experiments.bench.run import main

sys.exit(main())
