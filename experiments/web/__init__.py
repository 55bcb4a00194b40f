"""The browser table: play and watch the three games against agents, replays, and board pictures for papers.

``python -m experiments.web --game sab2 --players 6 --bots heuristic`` serves the page on 127.0.0.1 (needs the
``web`` extra: ``pip install -e '.[web]'``); ``python -m experiments.web.picture`` writes SVG / PNG boards. See
docs/web.md. Only :mod:`experiments.web.server` imports the server stack; the scene and word modules are plain.
"""
