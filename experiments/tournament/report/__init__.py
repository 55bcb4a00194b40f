"""Tournament reports (``python -m experiments.tournament.report runs/x``): per-game metrics (``metrics``), the
tables T1-T6 and ratings (``tables``), belief calibration (``calibration``), and the report itself (``build``)."""
