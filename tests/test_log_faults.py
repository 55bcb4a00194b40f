"""Faults injected for real into tournament logs and runs: SIGKILL and SIGTERM of real tournament processes, killed
pool workers and Ray actors, torn tails, logs concatenated with themselves, missing rounds, tampered winners /
actions / versions, flipped bytes, and the command lines' argument errors.

The reference for "identical records" is an uninterrupted in-process run of the same games (same seeds)."""

from __future__ import annotations

import gzip
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time
import warnings
import zlib
from pathlib import Path

import pytest

from experiments.tournament import cli as tour
from experiments.tournament import replay
from experiments.tournament.logs import cli as logs_cli
from experiments.tournament.logs.format import (
    LOG_NAME,
    MAX_RECORD,
    LogBusyError,
    LogError,
    LogVersionError,
    LogWarning,
    describe,
    game_key,
)
from experiments.tournament.logs.read import LogReader, read_games
from experiments.tournament.logs.write import LogWriter, encode_game
from experiments.tournament.report import build as report
from experiments.tournament.run import run, run_duel, run_sab2
from experiments.tournament.summary import Summary, summary_table
from experiments.tournament.tasks import TournamentWorker

ROOT = Path(__file__).resolve().parents[1]
GAMES = 40  # 3-player random games: ~20 per second, so a run lasts ~2.5 s with start-up
SECRET = 0x5EA1ED  # one tournament secret for every run here: a resumed run must equal an uninterrupted one
ARGS = ["--players", "3", "--miners", "random", "--saboteurs", "random", "--no-beliefs", "--seed", "0",
        "--secret", f"{SECRET:x}"]  # fmt: skip


def _reference(games: int = GAMES) -> dict[tuple, list[dict]]:
    games_ = run([3], ["random"], ["random"], games, seed=0, secret=SECRET, beliefs=False)
    return {game_key(g[0]["header"]): g for g in games_}


@pytest.fixture(scope="module")
def reference() -> dict[tuple, list[dict]]:
    return _reference()


# The signal test needs a run that is surely still playing when its second game is logged: 40 games with two
# workers on an idle machine could all be played before the test had read two of them (the signal then met a
# finished run). Five times as many last seconds past that point.
SIGNAL_GAMES = 5 * GAMES


@pytest.fixture(scope="module")
def long_reference() -> dict[tuple, list[dict]]:
    return _reference(SIGNAL_GAMES)


def _cmd(out: Path, *extra: str, games: int = GAMES) -> list[str]:
    return [sys.executable, "-m", "experiments.tournament", *ARGS, "--games", str(games), "--out", str(out), *extra]


def _start(cmd: list[str]) -> subprocess.Popen:
    # A session of its own: the test can signal the tournament's whole process group, as `timeout` does. At a lower
    # priority than the test: on a busy machine the test must see the run's second game and signal it while it still
    # plays (CI failed twice on runs that finished while the test waited for the CPU).
    return subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, preexec_fn=lambda: os.nice(10))  # fmt: skip


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # the group this test created for it
    except ProcessLookupError:
        pass
    proc.communicate(timeout=30)


def _records_in_file(path: Path) -> list[dict]:
    """Every record physically in the file (no de-duplication): a game must be there exactly once."""
    with gzip.open(path, "rt") as f:
        return [json.loads(line) for line in f if line.strip()]


def _assert_exactly_once(out: Path, reference: dict[tuple, list[dict]]) -> None:
    records = _records_in_file(out / LOG_NAME)
    keys = [(game_key(r["header"]), r["header"]["round"]) for r in records]
    assert len(keys) == len(set(keys)), "a round record is in the log twice"
    games = {game_key(g[0]["header"]): g for g in read_games(out)}
    assert set(games) == set(reference) and len(records) == sum(len(g) for g in reference.values())
    for key, records in reference.items():
        assert games[key] == records, f"{describe(key)} differs from the uninterrupted run"


def _wait_for_games(path: Path, count: int, proc: subprocess.Popen, timeout: float = 60) -> None:
    """Wait until the log holds ``count`` complete games (read quietly: the writer may be mid-member)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists():
            if sum(1 for _ in LogReader(path, quiet=True).games()) >= count:
                return
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.01)
    raise AssertionError(f"no {count} games in {path} after {timeout} s")


# ---- SIGKILL / SIGTERM of real tournament processes -------------------------------------------------------------
def _kill_runs(tmp_path: Path, reference: dict, runs: int, seed: int, workers: int = 1) -> None:
    """Per run: start a tournament, SIGKILL its process group at a random instant, start it again (it resumes) and
    SIGKILL that one too, then finish in-process; the log must hold every game exactly once, as uninterrupted."""
    rng = random.Random(seed)
    extra = ("--workers", str(workers), "--chunk", "2")
    for k in range(runs):
        out = tmp_path / f"run{k}"
        for attempt in range(2):
            proc = _start(_cmd(out, *extra))
            # Kill at a random instant, whatever the machine's speed: during start-up, or once a random number of
            # games are logged plus a random part of a game (inside a game, a write or an fsync).
            target = rng.randrange(-2, GAMES // (2 + attempt))
            if target <= 0:
                time.sleep(rng.uniform(0.0, 0.6))
            else:
                _wait_for_games(out / LOG_NAME, target, proc)
                time.sleep(rng.uniform(0.0, 0.08))
            assert attempt or proc.poll() is None, "the first kill must hit a running tournament"
            _kill_group(proc)
            if (out / LOG_NAME).exists():  # (a kill during start-up may come before the log exists)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", LogWarning)  # a torn tail is expected
                    assert all(len(g) == 3 for g in read_games(out))  # readable after every kill
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", LogWarning)
            list(run([3], ["random"], ["random"], GAMES, seed=0, secret=SECRET, beliefs=False, out=out))  # resume
        _assert_exactly_once(out, reference)


def test_sigkill_at_random_points_then_resume(tmp_path, reference):
    _kill_runs(tmp_path, reference, runs=2, seed=1)


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2])
def test_sigkill_many_runs_then_resume(tmp_path, reference, workers):
    _kill_runs(tmp_path, reference, runs=12, seed=workers, workers=workers)


def _cut_points(size: int, boundaries: list[int], count: int, rng: random.Random) -> list[int]:
    near = {b + d for b in boundaries for d in (-1, 0, 1, 10)}
    return sorted({p for p in near if 0 < p < size} | {rng.randrange(1, size) for _ in range(count)})


@pytest.mark.parametrize("count", [8, pytest.param(120, marks=pytest.mark.slow)])
def test_kill_at_any_byte_then_resume(tmp_path, count):
    """A SIGKILL leaves the log as a byte prefix of what the writer appended: cut it everywhere (member boundaries,
    inside headers, inside trailers, random bytes) and resume each prefix."""
    reference = _reference(4)
    full = tmp_path / "full"
    list(run([3], ["random"], ["random"], 4, seed=0, secret=SECRET, beliefs=False, out=full))
    data = (full / LOG_NAME).read_bytes()
    boundaries, pos = [], 0
    for records in reference.values():
        pos += len(encode_game(records))
        boundaries.append(pos)
    assert boundaries[-1] == len(data)  # one deterministic member per game, in task order
    for cut in _cut_points(len(data), boundaries, count, random.Random(count)):
        out = tmp_path / f"cut{cut}"
        out.mkdir()
        (out / LOG_NAME).write_bytes(data[:cut])
        torn = cut not in boundaries
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", LogWarning)
            kept = list(read_games(out))
        assert len(kept) == sum(b <= cut for b in boundaries)
        assert torn == any("torn tail" in str(w.message) and str(out / LOG_NAME) in str(w.message) for w in caught)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", LogWarning)
            list(run([3], ["random"], ["random"], 4, seed=0, secret=SECRET, beliefs=False, out=out))
        _assert_exactly_once(out, reference)
        assert (out / LOG_NAME).read_bytes() == data  # the resumed log is byte-identical to the uninterrupted one


@pytest.mark.parametrize(("workers", "sig", "group"), [(1, signal.SIGTERM, False), (2, signal.SIGINT, True)])
def test_sigterm_or_ctrl_c_finishes_cleanly(tmp_path, long_reference, workers, sig, group):
    """SIGTERM to the main process (or Ctrl-C to the whole group, workers included): the games in flight are
    logged, the log is closed without a torn tail, the exit code is 128 + signal, and resume completes it."""
    reference = long_reference
    out = tmp_path / "log"
    proc = _start(_cmd(out, "--workers", str(workers), "--chunk", "2", games=SIGNAL_GAMES))
    try:
        _wait_for_games(out / LOG_NAME, 2, proc)
        (os.killpg if group else os.kill)(proc.pid, sig)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            _kill_group(proc)
    assert proc.returncode == 128 + sig, err
    assert f"stopped by {signal.Signals(sig).name}" in err and "run the same command again to resume" in err
    assert "Traceback" not in err, err
    with warnings.catch_warnings():
        warnings.simplefilter("error", LogWarning)  # no torn tail, no duplicate, nothing incomplete
        logged = list(read_games(out))
    assert 2 <= len(logged) < SIGNAL_GAMES
    for records in logged:
        assert records == reference[game_key(records[0]["header"])]
    list(run([3], ["random"], ["random"], SIGNAL_GAMES, seed=0, secret=SECRET, beliefs=False, out=out))
    _assert_exactly_once(out, reference)


# ---- killed workers ---------------------------------------------------------------------------------------------
def _children(pid: int) -> list[tuple[int, str]]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append((int(entry.name), cmdline))
    return out


def test_pool_worker_killed_mid_run(tmp_path, long_reference):
    """SIGKILL one process of the local pool mid-run: its games are re-run on a new pool, each logged once, and the
    run exits. Five games a chunk (~38 KB pickled) make the other worker's unread results outgrow a pipe's 64 KiB:
    unless the broken pool's survivors are killed, that worker blocks sending and the exit waits for it forever.
    SIGNAL_GAMES, as the signal test: 40 games on an idle machine could all be played before the kill landed."""
    out = tmp_path / "log"
    proc = _start(_cmd(out, "--workers", "2", "--chunk", "5", games=SIGNAL_GAMES))
    try:
        _wait_for_games(out / LOG_NAME, 2, proc)
        workers = [pid for pid, cmd in _children(proc.pid) if "spawn_main" in cmd]
        assert len(workers) == 2
        os.kill(workers[0], signal.SIGKILL)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            _kill_group(proc)
    assert proc.returncode == 0, err
    assert "a worker process died; re-running" in err
    _assert_exactly_once(out, long_reference)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _session_processes(sid: int, name: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().decode(errors="replace")
                if os.getsid(int(entry.name)) == sid and name in cmdline:
                    pids.append(int(entry.name))
            except (OSError, ProcessLookupError):
                continue
    return pids


@pytest.mark.slow
def test_ray_actor_killed_mid_run(tmp_path, reference):
    """A real Ray cluster on this machine (``ray start --head``, 2 CPUs, started and stopped here): SIGKILL one of
    the two actor processes mid-run; Ray restarts it and retries its request; every game is logged once. 15-26 s
    (mostly the cluster's start-up), hence the slow tier; the local pool's test is the default-tier one."""
    pytest.importorskip("ray")
    ray_cli = Path(sys.executable).with_name("ray")
    port, temp = _free_port(), Path(f"/tmp/rt{os.getpid()}")  # short: Ray's socket paths are length-limited
    env = dict(os.environ, RAY_AUTH_MODE="disabled")  # a loopback test cluster; no token to hand around
    head = subprocess.Popen([str(ray_cli), "start", "--head", "--node-ip-address=127.0.0.1", f"--port={port}",
                             "--num-cpus=2", "--include-dashboard=false", "--disable-usage-stats",
                             f"--temp-dir={temp}"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)  # fmt: skip
    out = tmp_path / "log"
    proc = None
    try:
        text, _ = head.communicate(timeout=120)  # returns once the cluster is up; its processes keep the session
        assert head.returncode == 0, text
        proc = subprocess.Popen(_cmd(out, "--backend", "ray", "--address", f"127.0.0.1:{port}", "--workers", "2",
                                     "--chunk", "2"), cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)  # fmt: skip
        _wait_for_games(out / LOG_NAME, 2, proc, timeout=120)
        actors = _session_processes(head.pid, "ray::TournamentWorker")  # this cluster's actors only
        assert actors, "no actor process found"
        os.kill(actors[0], signal.SIGKILL)
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    finally:
        if proc is not None and proc.poll() is None:
            _kill_group(proc)
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(head.pid, sig)  # every process of the cluster (they share the session's group)
            except ProcessLookupError:
                break
            time.sleep(2)
        shutil.rmtree(temp, ignore_errors=True)
    _assert_exactly_once(out, reference)


# ---- damaged and merged logs ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def belief_log(tmp_path_factory) -> Path:
    """Two cells x 3 games at 4 players with belief snapshots (so every report table has data)."""
    out = tmp_path_factory.mktemp("beliefs")
    list(run([4], ["random", "greedy"], ["random"], 3, seed=2, secret=SECRET, out=out))
    return out


def _copy(src: Path, dst: Path) -> Path:
    dst.mkdir(parents=True)
    shutil.copy(src / LOG_NAME, dst / LOG_NAME)
    return dst


def _rewrite(path: Path, edit) -> None:
    """Re-encode a log game by game after ``edit(index, records)`` (valid gzip: only re-play can tell)."""
    games = list(LogReader(path).games())
    data = b"".join(encode_game(g) for g in (edit(i, g) for i, g in enumerate(games)) if g)
    (path / LOG_NAME if path.is_dir() else path).write_bytes(data)


def test_torn_tail_is_skipped_with_a_warning(tmp_path, belief_log):
    out = _copy(belief_log, tmp_path / "torn")
    path = out / LOG_NAME
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 100])  # the last game's member loses its end
    with pytest.warns(LogWarning, match=rf"{path}: torn tail at byte \d+"):
        assert len(list(read_games(out))) == 5
    with pytest.warns(LogWarning, match="torn tail"):
        tables = report.build_report(out, with_plots=False)
    assert sum(r["games"] for r in tables["T1_balance"]) == 5
    with pytest.warns(LogWarning, match="torn tail"):
        list(run([4], ["random", "greedy"], ["random"], 3, seed=2, secret=SECRET, out=out))
    assert len(_records_in_file(path)) == 18 and path.read_bytes() == (belief_log / LOG_NAME).read_bytes()


def test_log_concatenated_twice_reports_the_same_tables(tmp_path, belief_log):
    single = report.build_report(belief_log, tmp_path / "r1", with_plots=False)
    doubled = tmp_path / "doubled"
    doubled.mkdir()
    data = (belief_log / LOG_NAME).read_bytes()
    (doubled / LOG_NAME).write_bytes(data + data)  # `cat a a > b`
    with pytest.warns(LogWarning, match=r"18 duplicate round records skipped \(e\.g\. record 19 repeats record 1"):
        twice = report.build_report(doubled, tmp_path / "r2", with_plots=False)
    assert twice == single
    assert "skipped 18 duplicate records" in (tmp_path / "r2" / "summary.md").read_text()
    # Resuming into it drops the copies (with a warning) and plays nothing.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", LogWarning)
        resumed = list(run([4], ["random", "greedy"], ["random"], 3, seed=2, secret=SECRET, out=doubled))
    assert any("rewritten without 18 duplicate records and 0 incomplete games" in str(w.message) for w in caught)
    assert len(resumed) == 6 and (doubled / LOG_NAME).read_bytes() == data
    # merge does the same for several logs: each game once.
    assert logs_cli.main(["merge", str(tmp_path / "merged"), str(belief_log), str(doubled)]) == 0
    assert (tmp_path / "merged" / LOG_NAME).read_bytes() == data


@pytest.mark.parametrize("missing", [1, 2])
def test_missing_round_is_replayed_once(tmp_path, reference, missing):
    """A game with a round record missing (a middle one, or the last one) is re-played once: 3 records, never 5."""
    out = tmp_path / "log"
    list(run([3], ["random"], ["random"], 6, seed=0, secret=SECRET, beliefs=False, out=out))
    _rewrite(out, lambda i, g: [r for r in g if i != 3 or r["header"]["round"] != missing])
    path = out / LOG_NAME
    assert len(_records_in_file(path)) == 17
    with pytest.warns(LogWarning, match=r"1 incomplete games skipped \(e\.g\. base N=3 random/random seed 3 from "
                                        r"record 10 has rounds \[.*\] of 0\.\.2\)"):  # fmt: skip
        assert len(list(read_games(out))) == 5
    with pytest.warns(LogWarning):
        played = list(run([3], ["random"], ["random"], 6, seed=0, secret=SECRET, beliefs=False, out=out))
    assert len(played) == 6
    records = _records_in_file(path)
    assert len(records) == 18 and sum(r["header"]["seed"] == 3 for r in records) == 3
    expected = {k: v for k, v in reference.items() if k[-1] < 6}
    _assert_exactly_once(out, expected)


def _small_logs(tmp_path: Path) -> dict[str, Path]:
    dirs = {name: tmp_path / name for name in ("base", "duel", "sab2")}
    list(run([3], ["random"], ["random"], 2, seed=0, secret=SECRET, beliefs=False, out=dirs["base"]))
    list(run_duel(["random", "greedy"], 1, seed=0, secret=SECRET, out=dirs["duel"]))
    list(run_sab2([4], ["random"], 1, seed=0, secret=SECRET, out=dirs["sab2"]))
    return dirs


def _tamper_winner(g: list[dict]) -> list[dict]:
    end = g[1]["end"]
    if "winner" in end:
        end["winner"] = "saboteurs" if end["winner"] == "gold-diggers" else "gold-diggers"
    elif "winners" in end:  # Saboteur 2
        end["winners"] = [not w for w in end["winners"]]
    else:  # the duel: nugget totals decide the winner
        end["nuggets"] = end["nuggets"][::-1] if end["nuggets"][0] != end["nuggets"][1] else [9, 0]
    return g


def _tamper_action(g: list[dict]) -> list[dict]:
    actions = g[1]["actions"]
    actions[2] = next(a for a in range(10**4) if a not in actions[:3])  # another id: illegal or different events
    return g


def _tamper_rules(g: list[dict]) -> list[dict]:
    g[0]["header"]["rules_version"] = "base-1/seeds"
    return g


@pytest.mark.parametrize("tamper", [_tamper_winner, _tamper_action, _tamper_rules])
def test_tampering_is_found_by_verify_and_replay(tmp_path, capsys, tamper):
    dirs = _small_logs(tmp_path)
    for name, out in dirs.items():
        assert logs_cli.main(["verify", str(out)]) == 0  # untouched logs verify
        capsys.readouterr()
        _rewrite(out, lambda i, g: tamper(g) if i == 0 else g)
        total, played, problems = logs_cli.verify(out)
        assert total == played and len(problems) == 1, (name, problems)
        assert problems[0].startswith(f"{out / LOG_NAME}, record 1: ") and "seed 0" in problems[0]
        expected = {_tamper_winner: "end.", _tamper_action: "round 1", _tamper_rules: "header.rules_version"}
        assert expected[tamper] in problems[0], problems[0]
        assert logs_cli.main(["verify", str(out), "--sample", "5"]) == 1
        assert "MISMATCH" in capsys.readouterr().out
    # The replay viewer refuses the tampered base game, naming the file, the record and the difference.
    with pytest.raises(SystemExit) as stop:
        replay.main([str(dirs["base"]), "--game", "0", "--gif", str(tmp_path / "g.gif")])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and f"{dirs['base'] / LOG_NAME}, record 1: game 0" in err and "Traceback" not in err
    assert not (tmp_path / "g.gif").exists()
    assert replay.game_from_log(dirs["base"], 1)[1] == 1  # game 1 (seed 1) is intact


def test_verify_full_reruns_the_agents(tmp_path, belief_log):
    """Belief snapshots cannot be checked from the actions alone: ``--full`` plays the game again with its agents."""
    out = _copy(belief_log, tmp_path / "log")
    assert logs_cli.verify(out, full=True)[2] == []
    for name, small in _small_logs(tmp_path / "small").items():
        assert logs_cli.verify(small, full=True)[2] == [], name  # the duel and Saboteur 2 agents re-run identically

    def tamper(i: int, g: list[dict]) -> list[dict]:
        if i == 2:
            g[0]["beliefs"][3]["reference"][0] += 1
        return g

    _rewrite(out, tamper)
    assert logs_cli.verify(out)[2] == []  # the engine re-plays the game: the beliefs are not part of it
    problems = logs_cli.verify(out, full=True)[2]
    assert len(problems) == 1 and "record 7" in problems[0] and "record.beliefs[3].reference[0]" in problems[0]


def test_tampered_version_refuses_resume(tmp_path):
    out = tmp_path / "log"
    list(run([3], ["random"], ["random"], 2, seed=0, secret=SECRET, beliefs=False, out=out))
    _rewrite(out, lambda i, g: [dict(r, header=dict(r["header"], package_version="0.2.9")) for r in g] if i else g)
    message = r"holds base games of saboteur-env 0\.2\.9, .* \(first at record 4\) where .*new --out"
    with pytest.raises(LogVersionError, match=message):
        list(run([3], ["random"], ["random"], 3, seed=0, secret=SECRET, beliefs=False, out=out))
    assert len(_records_in_file(out / LOG_NAME)) == 6  # nothing was appended


def test_old_logs_are_read_but_not_resumed(tmp_path):
    """An old log (one gzip member per run, no package version, killed mid-run): report and verify read the games
    that the torn member holds; resume refuses it with a message."""
    out = tmp_path / "old"
    out.mkdir()
    games = list(run([3], ["random"], ["random"], 3, seed=0, secret=SECRET, beliefs=False))
    comp = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    data = b""
    for g in games:
        for r in g:
            del r["header"]["package_version"], r["header"]["rounds"]
        data += comp.compress(b"".join(json.dumps(r).encode() + b"\n" for r in g)) + comp.flush(zlib.Z_SYNC_FLUSH)
    (out / LOG_NAME).write_bytes(data)  # what gzip.open(..., "at") + flush() left behind a SIGKILL
    with pytest.warns(LogWarning, match="recovered 9 records written before it"):
        assert [g[0]["header"]["seed"] for g in read_games(out)] == [0, 1, 2]
    with pytest.warns(LogWarning):
        assert logs_cli.verify(out)[2] == []
    with pytest.warns(LogWarning), pytest.raises(LogVersionError, match=r"version not recorded: an old log.*new --out"):
        list(run([3], ["random"], ["random"], 3, seed=0, secret=SECRET, beliefs=False, out=out))


def test_damage_names_file_and_record_and_repair_keeps_the_rest(tmp_path, capsys):
    out = tmp_path / "log"
    list(run([3], ["random"], ["random"], 4, seed=0, secret=SECRET, beliefs=False, out=out))
    path = out / LOG_NAME
    data = bytearray(path.read_bytes())
    sizes = [len(encode_game(g)) for g in LogReader(out).games()]
    data[sizes[0] + sizes[1] // 2] ^= 0xFF  # a flipped byte inside game 2's member
    path.write_bytes(bytes(data))
    with pytest.raises(LogError, match=rf"{path}, record 4: gzip member 2 at byte {sizes[0]} is damaged"):
        list(read_games(out))
    with pytest.raises(SystemExit) as stop:
        report.main([str(out), "--no-plots"])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and "record 4" in err and "logs repair" in err and "Traceback" not in err
    with pytest.raises(LogError, match="record 4"):
        list(run([3], ["random"], ["random"], 4, seed=0, secret=SECRET, beliefs=False, out=out))  # resume refuses too
    assert logs_cli.main(["repair", str(out)]) == 0
    assert "kept 3 complete games" in capsys.readouterr().out
    assert len(list(out.glob(f"{LOG_NAME}.damaged-*"))) == 1
    list(run([3], ["random"], ["random"], 4, seed=0, secret=SECRET, beliefs=False, out=out))
    _assert_exactly_once(out, _reference(4))


def test_duplicates_and_conflicts_are_refused(tmp_path):
    out = tmp_path / "log"
    games = list(run([3], ["random"], ["random"], 2, seed=0, secret=SECRET, beliefs=False, out=out))
    with LogWriter(tmp_path / "other") as writer:
        writer.write_game(games[0])
        with pytest.raises(LogError, match="refusing to write base N=3 random/random seed 0 twice"):
            writer.write_game(games[0])
        with pytest.raises(LogError, match=r"rounds \[0, 1\]"):
            writer.write_game(games[1][:2])
        with pytest.raises(LogBusyError, match="another process is writing this log"):
            LogWriter(tmp_path / "other")
    # The same key with other content: an error naming both records, not a silent pick.
    path = out / LOG_NAME
    changed = [dict(r, actions=[*r["actions"], 0]) if r["header"]["round"] == 1 else r for r in games[0]]
    path.write_bytes(path.read_bytes() + encode_game(changed))
    with pytest.raises(LogError, match=rf"{path}, record 8: base N=3 random/random seed 0 round 1 differs from the "
                                       "copy of this game logged at record 1"):  # fmt: skip
        list(read_games(out))


def test_worker_env_reuse_and_streaming_summary(reference):
    worker = TournamentWorker()
    tasks = [(3, "random", "random", s, False, None) for s in range(3)] + [("duel", "random", "random", 0, "seed_5x9")]
    worker.play(tasks)
    assert sorted(worker.envs) == [("base", 3), ("duel", "seed_5x9")]  # one environment per configuration
    summary = Summary()
    for g in reference.values():
        summary.add(g)
    assert summary.table() == summary_table([r for g in reference.values() for r in g])
    assert f"{GAMES:>6}" in summary.table()


# ---- command lines ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("main", "argv", "message"),
    [
        (tour.main, ["--games", "-1"], "at least 1"),
        (tour.main, ["--players", "13"], "out of range; valid: 3..10"),
        (tour.main, ["--game", "sab2", "--players", "13"], "valid: 2..12"),
        (tour.main, ["--game", "duel", "--players", "3"], "two-player"),
        (tour.main, ["--players", "5", "5"], "lists 5 twice"),
        (tour.main, ["--seed", "-3"], "--seed -3"),
        (tour.main, ["--workers", "0"], "at least 1"),
        (tour.main, ["--miners", "ppo:/nonexistent.zip"], "no model file"),
        (tour.main, ["--out", "FILE"], "is a file"),
        (report.main, ["MISSING"], "does not exist"),
        (report.main, ["EMPTY"], "no rounds.jsonl.gz there"),
        (replay.main, ["MISSING", "--gif", "x.gif"], "does not exist"),
        (replay.main, ["--players", "13", "--seed", "0", "--gif", "x.gif"], "--players 13"),
        (replay.main, ["--players", "4", "--seed", "-1", "--gif", "x.gif"], "--seed -1"),
        (logs_cli.main, ["verify", "MISSING"], "no log there"),
        (logs_cli.main, ["repair", "EMPTY"], "no log there"),
        (logs_cli.main, [], "required"),
    ],
)
def test_cli_argument_errors(tmp_path, capsys, main, argv, message):
    (tmp_path / "FILE").write_text("x")
    (tmp_path / "EMPTY").mkdir()
    argv = [str(tmp_path / a) if a in ("FILE", "MISSING", "EMPTY") else a for a in argv]
    with pytest.raises(SystemExit) as stop:
        main(argv)
    err = capsys.readouterr().err
    assert stop.value.code == 2 and message in err and "Traceback" not in err, err


def test_cli_sample_and_game_index_errors(tmp_path, capsys):
    out = tmp_path / "log"
    list(run([3], ["random"], ["random"], 1, seed=0, secret=SECRET, beliefs=False, out=out))
    for main, argv, message in [
        (logs_cli.main, ["verify", str(out), "--sample", "0"], "--sample must be at least 1"),
        (replay.main, [str(out), "--game", "5", "--gif", "x.gif"], "out of range; the log holds games 0..0"),
        (replay.main, [str(out), "--game", "-1", "--gif", "x.gif"], "--game -1 must be at least 0"),
        (logs_cli.main, ["merge", str(out), str(out)], "must not be one of the inputs"),
    ]:
        with pytest.raises(SystemExit) as stop:
            main(argv)
        err = capsys.readouterr().err
        assert stop.value.code == 2 and message in err and "Traceback" not in err, err


# ---- hostile files (issue 34): every one is a LogError naming the file, quickly and in bounded memory ----------------
def _member(chunks) -> bytes:
    """One gzip member of the given byte chunks (compressed piece by piece: the test never holds the whole text)."""
    z = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    return b"".join(z.compress(c) for c in chunks) + z.flush()


def test_a_member_without_newline_stops_at_the_record_cap_in_bounded_memory(tmp_path, capsys):
    import tracemalloc

    out = tmp_path / "bomb"
    out.mkdir()
    # 256 MiB of one "record" in ~250 KiB: the old reader decoded all of it (and held it twice) before refusing.
    (out / LOG_NAME).write_bytes(_member(b"a" * (1 << 20) for _ in range(256)))
    tracemalloc.start()
    try:
        with pytest.raises(LogError, match=rf"record is longer than {MAX_RECORD} bytes"):
            list(read_games(out))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * MAX_RECORD + (16 << 20), peak
    with pytest.raises(SystemExit) as stop:
        report.main([str(out), "--no-plots"])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and "longer than" in err and "Traceback" not in err


def test_deeply_nested_json_is_a_log_error_not_a_recursion_error(tmp_path, capsys):
    out = tmp_path / "deep"
    out.mkdir()
    (out / LOG_NAME).write_bytes(_member([b"[" * 200_000 + b"]" * 200_000 + b"\n"]))
    with pytest.raises(LogError, match=r"record 1: not a round record \(JSON nested too deeply\)"):
        list(read_games(out))
    (out / LOG_NAME).write_bytes(_member([b'{"header": ' + b"9" * 5000 + b"}\n"]))  # int() digit limit
    with pytest.raises(LogError, match="record 1: not valid JSON"):
        list(read_games(out))
    with pytest.raises(SystemExit) as stop:
        report.main([str(out), "--no-plots"])
    assert stop.value.code == 2 and "Traceback" not in capsys.readouterr().err


def test_only_regular_files_are_read_as_logs(tmp_path, capsys):
    fifo = tmp_path / "fifo.jsonl.gz"
    os.mkfifo(fifo)  # no writer: opening it for reading the usual way blocks forever
    folder = tmp_path / "d"
    (folder / LOG_NAME).mkdir(parents=True)
    for path, what in ((fifo, "a FIFO"), (Path("/dev/zero"), "a character device"), (folder, "a directory")):
        with pytest.raises(LogError, match=f"is {what}.*; expected a regular file"):
            list(read_games(path))
    with pytest.raises(SystemExit) as stop:
        replay.main([str(fifo)])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and "FIFO" in err and "Traceback" not in err
