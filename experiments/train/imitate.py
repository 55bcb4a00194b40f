"""Imitation warm start for self-play (issue 14): ``python -m experiments.train.imitate --game base --players 5``.

Behaviour cloning of a scripted teacher (``expert`` by default) into the network of :mod:`experiments.train.selfplay`,
so that PPO starts from a policy that already digs, blocks and maps like a player instead of from random play
(pure self-play from scratch stays near random: docs/selfplay.md). The result is an ordinary ``policy.npz``
(``make_agent("learned:OUT/policy.npz", config)``) and ``python -m experiments.train.selfplay --init OUT/policy.npz``
continues from it.

1. **Collect** (:func:`collect`): games on :class:`saboteur_env.vector.VectorEnv`; in each new game every seat is
   the teacher with probability ``--teacher-share`` (at least one seat), the others one partner agent drawn from
   ``--partners``. Every teacher decision is recorded: the seat's float observation (sparse: about 8% of it is
   nonzero), its legal actions, the teacher's action and the seat's discounted return from that decision on, with
   the per-seat turn accounting of the PPO trainer (a transition ends at the seat's next decision and carries
   what it earned meanwhile; ``gamma`` per transition), so the value head starts where PPO will use it. Games
   still running when the budget is reached are discarded (their returns are unknown). ``--workers`` processes
   collect on disjoint seed streams (worker ``w``: its own stream and an equal share of the decisions), joined in
   worker order, so the options (the worker count among them) fix the data whatever the processes' timing.
2. **Fit** (:func:`fit`): cross-entropy of the teacher's action under the masked softmax of the policy head
   (legal actions only) plus ``vf_coef`` times the value error; Adam; a held-out tenth of the games reports the
   agreement (how often the policy's most likely action is the teacher's) and the losses per epoch.
3. **Export** at ``--temperature`` T (:func:`sharpen`: the policy head divided by T). The fitted distribution
   spreads its mass over moves the teacher made in similar observations; T < 1 plays its likely moves more often
   (at 5 players, 300 paired deals against ``heuristic`` in the same seat: docs/training.md).

**Fine-tuning** (``--init POLICY.npz --init-temperature T``): the fit starts from a policy of the same shape (its
head multiplied by ``T``, the temperature it was exported at, so training starts from the fitted logits); expert
iteration (:mod:`experiments.train.exit`) fits each iteration this way.

**DAgger** (``--student POLICY.npz --student-share p``, with ``--extra OLD/data.npz`` to aggregate): a teacher
seat's moves are played by the student policy in a share ``p`` of the teacher seats (drawn per seat and game),
while the teacher still labels every decision of that seat. The recorded states are then the ones the student's
own mistakes lead to, the fix for a clone's compounding errors (Ross, Gordon & Bagnell 2011). ``--extra`` adds
earlier data files of the same game to the fit (DAgger fits the union); the held-out tenth is drawn over all games.
Without ``--student`` no draw is added, so the data of earlier options stay bit for bit what they were. A teacher
that notes private facts from its own moves (``expert``'s own face-down discards, the Duel believers' passes) is
told the move actually played (``played_instead(chosen, played)``), so its card counts stay those of its seat.

Outputs in ``OUT``: ``data.npz`` (the collected decisions, reused by a rerun with the same collection options),
``fit.csv`` (per epoch: train/validation loss and agreement), ``policy.npz`` and ``meta.json`` (the options,
sizes, timings and final agreement; ``collect_s`` is the collection's own wall time, also when the data were
reused; null for data written before it was recorded).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from numpy.typing import NDArray

from agents import make_agent, oracle_names
from agents.base.belief_features import feature_size
from agents.learned import NumpyPolicy
from experiments.train.imitate_data import DATA_VERSION, Data, DataFileError, _spans, concat, load_data, with_features
from saboteur_env import GameConfig
from saboteur_env.vector import VectorEnv


@dataclass
class Options:
    """Command-line options (see ``--help``)."""

    game: str = "base"
    players: int | None = None
    teacher: str = "expert"
    partners: str = "heuristic,expert"  # agents of the non-teacher seats, one drawn per game
    teacher_share: float = 0.5  # probability that a seat is the teacher (at least one seat per game)
    decisions: int = 200_000  # teacher decisions to collect
    num_envs: int = 32  # games per collecting worker, stepped in lock-step
    workers: int = 2
    gamma: float = 0.99
    hidden: int = 64
    embed: int = 0  # width of a linear bottleneck before the policy heads (0: none)
    role_heads: bool = True
    epochs: int = 8
    batch: int = 1024
    lr: float = 1e-3
    vf_coef: float = 0.5
    temperature: float = 1.0  # exported policy = the fitted one at this temperature (folded into the head weights)
    seed: int = 0
    threads: int = 1
    out: str = "runs/imitate"
    student: str = ""  # DAgger: a policy.npz that plays a share of the teacher seats (the teacher labels them)
    student_share: float = 0.5  # probability, per teacher seat and game, that the student plays it
    extra: str = ""  # comma-separated data.npz files of earlier collections, fitted together with this one
    features: str = ""  # belief features the network reads besides the observation ("bayes"; "" = none)
    init: str = ""  # a policy.npz of the same shape to start the fit from (expert iteration fine-tunes); "": fresh
    init_temperature: float = 1.0  # the temperature --init was exported at: its head times this is the fitted one
    duel_layout: str = "seed_5x9"  # the Duel's geometry (other games: ignored)
    universal: bool = False  # fit one network for every player count of the game (experiments.train.universal)
    # > 0: a teacher with per-move values (the search) labels each decision with softmax(values / T) over its
    # candidate moves instead of its one choice (expert iteration's "choice distribution"); 0: the choice only.
    soft_temperature: float = 0.0

    def check(self) -> None:
        for name in ("decisions", "num_envs", "workers", "hidden", "epochs", "batch", "threads"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name}={v!r} must be a positive integer")
        if isinstance(self.embed, bool) or not isinstance(self.embed, int) or not 0 <= self.embed <= self.hidden:
            raise ValueError(f"embed={self.embed!r} is out of range; valid: 0 (none) or 1..hidden={self.hidden}")
        if self.workers > 64:
            raise ValueError(f"workers={self.workers} is out of range; valid: 1..64")
        if not (isinstance(self.soft_temperature, (int, float)) and 0.0 <= self.soft_temperature <= 100.0):
            raise ValueError(f"soft_temperature={self.soft_temperature!r} is out of range; valid: 0 (the teacher's "
                             "choice only) or (0, 100] nuggets")  # fmt: skip
        if not 0.0 < self.teacher_share <= 1.0:
            raise ValueError(f"teacher_share={self.teacher_share!r} is out of range; valid: (0, 1]")
        for name, lo, hi in (
            ("gamma", 0.0, 1.0),
            ("lr", 0.0, 1.0),
            ("temperature", 0.0, 10.0),
            ("init_temperature", 0.0, 10.0),
        ):
            v = getattr(self, name)
            if not lo < v <= hi:
                raise ValueError(f"{name}={v!r} is out of range; valid: ({lo}, {hi}]")
        if not self.vf_coef >= 0:
            raise ValueError(f"vf_coef={self.vf_coef!r} must be >= 0")
        if self.seed < 0:
            raise ValueError(f"seed={self.seed} must be >= 0")
        config = self.config()
        feature_size(self.features, config)  # an unknown set, or one for another game, fails here
        for name in (self.teacher, *self.partner_names()):
            if name in oracle_names(config.game):
                raise ValueError(f"agent {name!r} reads hidden state; a teacher or partner must play from views")
            make_agent(name, config)  # an unknown name fails here, naming the valid ones
        if self.teacher_share < 1.0 and not self.partner_names():
            raise ValueError("teacher_share < 1 needs --partners (the agents of the other seats)")
        if not 0.0 < self.student_share <= 1.0:
            raise ValueError(f"student_share={self.student_share!r} is out of range; valid: (0, 1]")
        if self.student:
            NumpyPolicy(self.student).check_config(config)  # a missing, malformed or foreign file fails here
            if Path(self.student).resolve() == (Path(self.out) / "policy.npz").resolve():
                raise ValueError(f"student {self.student!r} is this run's own output (it would be overwritten); "
                                 "copy it elsewhere first")  # fmt: skip
        if self.init:  # a missing, foreign or differently shaped file fails here, naming the difference
            from experiments.train.selfplay.policy import Policy, load_npz

            net = Policy(config, self.hidden, self.role_heads, self.embed, self.features, self.universal)
            load_npz(net, self.init, config)
        extra = [Path(p).resolve() for p in self.extra_paths()]
        for path in self.extra_paths():
            if not Path(path).is_file():
                raise ValueError(f"extra data file {path!r} does not exist")
        if len(set(extra)) != len(extra) or (Path(self.out) / "data.npz").resolve() in extra:
            raise ValueError(f"extra={self.extra!r} names a file twice or this run's own data.npz: every decision "
                             "would count twice")  # fmt: skip

    def extra_paths(self) -> list[str]:
        return [x.strip() for x in self.extra.split(",") if x.strip()]

    def partner_names(self) -> list[str]:
        return [n.strip() for n in self.partners.split(",") if n.strip()]

    def config(self) -> GameConfig:
        if self.game == "duel":
            return GameConfig(game="duel", num_players=self.players, duel_layout=self.duel_layout)  # type: ignore[arg-type]
        return GameConfig(game=self.game, num_players=self.players)  # type: ignore[arg-type]

    def collection_key(self) -> dict[str, Any]:
        """The options that fix the collected data (a rerun with the same key reuses ``data.npz``)."""
        keys = ("game", "players", "teacher", "partners", "teacher_share", "decisions", "num_envs", "workers",
                "gamma", "seed")  # fmt: skip
        key = {k: getattr(self, k) for k in keys} | {"num_players": self.config().num_players,
                                                      "data_version": DATA_VERSION}  # fmt: skip
        if self.game == "duel" and self.duel_layout != "seed_5x9":  # only then: earlier data keys stay valid
            key |= {"duel_layout": self.duel_layout}
        if self.student:  # the student's weights fix the data, not its path
            key |= {"student_sha256": _sha256(self.student), "student_share": self.student_share}
        if self.soft_temperature > 0:  # only then: earlier data keys stay valid
            key |= {"soft_temperature": self.soft_temperature}
        return key


def _sha256(path: str) -> str:
    import hashlib

    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def collect(opt: Options, worker: int, decisions: int) -> Data:
    """Play games until ``decisions`` teacher decisions of finished games are recorded (worker ``worker``'s seeds);
    with ``opt.student`` the student plays a share of the teacher seats and the teacher labels their decisions."""
    config = opt.config()
    n, b_num = config.num_players, opt.num_envs
    partners = opt.partner_names()
    rng = np.random.default_rng([opt.seed, worker, 0x1A17])
    env = VectorEnv(b_num, config=config)
    obs, info = env.reset(seed=int(rng.integers(1 << 31)))
    agents: list[list[Any]] = [[] for _ in range(b_num)]
    players: list[dict[int, Any]] = [{} for _ in range(b_num)]  # per slot: seat -> the student playing it
    teacher = np.zeros((b_num, n), dtype=bool)
    game_of = np.zeros(b_num, dtype=np.int64)
    games = 0

    def seat(b: int) -> None:
        nonlocal games
        t = rng.random(n) < opt.teacher_share
        if not t.any():
            t[int(rng.integers(n))] = True
        partner = partners[int(rng.integers(len(partners)))] if partners else opt.teacher
        seeds = rng.integers(1 << 62, size=n)
        row = []
        for s in range(n):
            a = make_agent(opt.teacher if t[s] else partner, config)
            a.reset(s, n, int(seeds[s]))
            row.append(a)
        students: dict[int, Any] = {}
        if opt.student:  # drawn only with a student: the streams of student-free options stay as they were
            play = t & (rng.random(n) < opt.student_share)
            student_seeds = rng.integers(1 << 62, size=n)
            for s in np.flatnonzero(play).tolist():
                students[s] = make_agent(f"learned:{opt.student}", config)
                students[s].reset(s, n, int(student_seeds[s]))
        agents[b], players[b], teacher[b], game_of[b] = row, students, t, games
        games += 1

    for b in range(b_num):
        seat(b)
    # Per recorded decision: the rewards its seat earned until its next decision (or the game's end), and that
    # next decision's index (-1: the game ended).
    rec_idx: list[NDArray[np.int32]] = []
    rec_val: list[NDArray[np.float32]] = []
    rec_nnz: list[NDArray[np.int64]] = []
    rec_legal: list[NDArray[np.int32]] = []
    rec_nlegal: list[NDArray[np.int64]] = []
    rec_soft: list[NDArray[np.float32]] = []  # with soft_temperature: each legal entry's target probability
    action_l: list[int] = []
    game_l: list[int] = []
    seat_l: list[int] = []
    finals: dict[int, NDArray[np.float32]] = {}  # final returns of every finished game, by game id
    reward: list[float] = []
    nxt: list[int] = []
    open_ = np.full((b_num, n), -1, dtype=np.int64)
    acc = np.zeros((b_num, n), dtype=np.float64)
    count = np.zeros(b_num, dtype=np.int64)  # decisions recorded in each slot's current game
    done_decisions = 0  # decisions of finished games
    while done_decisions < decisions:
        seats = np.asarray(info["seat"], dtype=np.int64)
        mask = info["action_mask"]
        # The teacher's (or partner's) choice is the label; a student seat then plays its own choice instead.
        actions = np.array([agents[b][int(seats[b])].act(obs[b], mask[b]) for b in range(b_num)], dtype=np.int64)
        played = actions.copy()
        for b in range(b_num):
            student = players[b].get(int(seats[b]))
            if student is not None:
                played[b] = student.act(obs[b], mask[b])
                hook = getattr(agents[b][int(seats[b])], "played_instead", None)
                if hook is not None and played[b] != actions[b]:
                    hook(int(actions[b]), int(played[b]))  # teachers that note their own moves correct them
        rows = np.flatnonzero(teacher[np.arange(b_num), seats])
        if rows.size:
            sub = obs[rows]
            r_i, c_i = np.nonzero(sub)
            rec_idx.append(c_i.astype(np.int32))
            rec_val.append(sub[r_i, c_i].astype(np.float32))
            rec_nnz.append(np.bincount(r_i, minlength=rows.size).astype(np.int64))
            m_r, m_c = np.nonzero(mask[rows])
            rec_legal.append(m_c.astype(np.int32))
            rec_nlegal.append(np.bincount(m_r, minlength=rows.size).astype(np.int64))
            if opt.soft_temperature > 0:
                rec_soft.append(_soft_targets(agents, rows, seats, actions, m_r, m_c, opt.soft_temperature))
            for b in rows.tolist():
                s = int(seats[b])
                i = len(action_l)
                prev = int(open_[b, s])
                if prev >= 0:
                    reward[prev], nxt[prev] = float(acc[b, s]), i
                acc[b, s] = 0.0
                open_[b, s] = i
                count[b] += 1
                action_l.append(int(actions[b]))
                game_l.append(int(game_of[b]))
                seat_l.append(s)
                reward.append(0.0)
                nxt.append(-1)
        obs, rewards, term, _, info = env.step(played)
        acc += rewards
        for b in np.flatnonzero(term).tolist():
            for s in range(n):
                i = int(open_[b, s])
                if i >= 0:
                    reward[i] = float(acc[b, s])
            done_decisions += int(count[b])
            count[b], open_[b], acc[b] = 0, -1, 0.0
            finals[int(game_of[b])] = np.asarray(info["final_returns"][b], dtype=np.float32)
            seat(b)
    gam = np.asarray(game_l, dtype=np.int64)
    done_ids = np.asarray(sorted(finals), dtype=np.int64)
    keep = np.isin(gam, done_ids)
    # Discounted return per transition, backwards along each stream (successors always come later).
    m = len(action_l)
    ret = np.zeros(m, dtype=np.float64)
    rew, nx = np.asarray(reward), np.asarray(nxt)
    for i in range(m - 1, -1, -1):
        ret[i] = rew[i] + (opt.gamma * ret[nx[i]] if nx[i] >= 0 else 0.0)
    nnz = np.concatenate(rec_nnz)
    nleg = np.concatenate(rec_nlegal)
    idx, val, leg = np.concatenate(rec_idx), np.concatenate(rec_val), np.concatenate(rec_legal)
    soft = np.concatenate(rec_soft) if rec_soft else None
    o_ptr = np.concatenate([[0], np.cumsum(nnz)])
    l_ptr = np.concatenate([[0], np.cumsum(nleg)])
    # Keep the finished games, renumbered 0.. in the order they started.
    rows = np.flatnonzero(keep)
    o_pos, o_cnt = _spans(o_ptr, rows)
    l_pos, l_cnt = _spans(l_ptr, rows)
    return Data(np.concatenate([[0], np.cumsum(o_cnt)]).astype(np.int64), idx[o_pos], val[o_pos],
                np.concatenate([[0], np.cumsum(l_cnt)]).astype(np.int64), leg[l_pos],
                np.asarray(action_l, dtype=np.int64)[rows], ret.astype(np.float32)[rows],
                np.searchsorted(done_ids, gam[rows]).astype(np.int64), np.asarray(seat_l, dtype=np.int64)[rows],
                np.stack([finals[g] for g in done_ids.tolist()]) if done_ids.size else np.zeros((0, n), np.float32),
                int(obs.shape[1]), soft=None if soft is None else soft[l_pos])  # fmt: skip


def _soft_targets(agents: list[list[Any]], rows: NDArray[np.int64], seats: NDArray[np.int64],
                  actions: NDArray[np.int64], m_r: NDArray[np.int64], m_c: NDArray[np.int64],
                  temperature: float) -> NDArray[np.float32]:  # fmt: skip
    """Each legal entry's target probability for the recorded ``rows`` (entries ``m_r``, ``m_c``: the rows'
    ``np.nonzero`` of their masks): softmax(value / T) over the candidate moves a search valued for that decision
    (its ``last_stats["values"]``), 0 for the other legal moves; a point mass at the action where the teacher
    valued nothing (a forced move, a teacher without values)."""
    out = np.zeros(m_c.size, dtype=np.float32)
    starts = np.searchsorted(m_r, np.arange(rows.size + 1))
    for j, b in enumerate(rows.tolist()):
        lo, hi = int(starts[j]), int(starts[j + 1])
        stats = getattr(agents[b][int(seats[b])], "last_stats", None) or {}
        values: dict[int, float] = stats.get("values") or {}
        cols = m_c[lo:hi]
        v = np.array([values.get(int(c), -np.inf) for c in cols], dtype=np.float64)
        if len(values) > 1 and np.isfinite(v.max()):
            z = np.exp((v - v.max()) / temperature)
            out[lo:hi] = z / z.sum()
        else:
            out[lo:hi] = cols == actions[b]
    return out


def _collect_worker(args: tuple[dict[str, Any], int, int]) -> dict[str, NDArray[Any]]:
    opt_d, worker, decisions = args
    torch.set_num_threads(1)
    return collect(Options(**opt_d), worker, decisions).arrays()


def collect_all(opt: Options) -> Data:
    """Collect ``opt.decisions`` decisions over ``opt.workers`` processes (the same data whatever their timing)."""
    share = [opt.decisions // opt.workers + (w < opt.decisions % opt.workers) for w in range(opt.workers)]
    jobs = [(asdict(opt), w, share[w]) for w in range(opt.workers)]
    if opt.workers == 1:
        parts = [_collect_worker(jobs[0])]
    else:
        with ProcessPoolExecutor(opt.workers) as pool:
            parts = list(pool.map(_collect_worker, jobs))
    return concat([Data.from_arrays(p) for p in parts])


# ---- fitting ------------------------------------------------------------------------------------------------------
def _batch_loss(model: Any, data: Data, rows: NDArray[np.int64], vf_coef: float) -> tuple[torch.Tensor, ...]:
    obs = torch.from_numpy(data.dense(rows))
    which, acts = data.legal_pairs(rows)
    t_rows, t_cols = torch.from_numpy(which), torch.from_numpy(acts)
    logp, value = model.legal(obs, t_rows, t_cols)
    target = torch.from_numpy(data.action[rows])
    hit = (t_cols == target[t_rows]).nonzero().squeeze(1)
    if data.soft is None:
        nll = -logp[hit].sum() / rows.size
    else:  # cross-entropy toward the teacher's choice distribution (the search's values)
        nll = -(torch.from_numpy(data.targets(rows)) * logp).sum() / rows.size
    v_loss = 0.5 * ((value - torch.from_numpy(data.ret[rows])) ** 2).mean()
    # Agreement: the policy's most likely legal action is the teacher's.
    top = torch.full((rows.size,), -math.inf).scatter_reduce(0, t_rows, logp.detach(), "amax")
    agree = (logp.detach()[hit] >= top[t_rows[hit]]).float().mean()
    return nll + vf_coef * v_loss, nll, v_loss, agree


def fit(opt: Options, data: Data, log: Path | None = None, quiet: bool = False) -> tuple[Any, dict[str, float]]:
    """Train a fresh :class:`experiments.train.selfplay.policy.Policy` on ``data``; returns it and the last epoch's
    numbers."""
    from experiments.train.selfplay.policy import Policy

    if bool(opt.features) != (data.feat is not None):
        raise ValueError(f"features={opt.features!r} but the data {'lack' if opt.features else 'carry'} belief "
                         "features (with_features adds them)")  # fmt: skip
    torch.manual_seed(opt.seed)
    gen = np.random.default_rng([opt.seed, 0xF17])
    model = Policy(opt.config(), opt.hidden, opt.role_heads, opt.embed, opt.features, opt.universal)
    if opt.init:
        from experiments.train.selfplay.policy import load_npz

        load_npz(model, opt.init, opt.config())
        sharpen(model, 1.0 / opt.init_temperature)  # undo the export's sharpening: fine-tune the fitted logits
    optim = torch.optim.Adam(model.parameters(), lr=opt.lr, eps=1e-5)
    games = np.unique(data.game)
    held = set(gen.choice(games, size=max(1, games.size // 10), replace=False).tolist()) if games.size > 1 else set()
    is_val = np.isin(data.game, np.fromiter(held, dtype=np.int64, count=len(held)))
    train_rows, val_rows = np.flatnonzero(~is_val), np.flatnonzero(is_val)
    cols = ["epoch", "train_loss", "train_nll", "train_v_loss", "train_agree", "val_nll", "val_v_loss", "val_agree",
            "seconds"]  # fmt: skip
    if log is not None:
        with log.open("w", newline="") as fh:
            csv.writer(fh).writerow(cols)
    last: dict[str, float] = {}
    steps_total = opt.epochs * max(1, math.ceil(train_rows.size / opt.batch))
    step = 0
    for epoch in range(1, opt.epochs + 1):
        t0 = time.perf_counter()
        perm = gen.permutation(train_rows)
        sums = np.zeros(4)
        count = 0
        model.train()
        for chunk in np.array_split(perm, max(1, math.ceil(perm.size / opt.batch))):
            for g in optim.param_groups:  # cosine decay to 5%: the last epochs settle
                g["lr"] = opt.lr * (0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * step / steps_total)))
            loss, nll, v_loss, agree = _batch_loss(model, data, np.sort(chunk), opt.vf_coef)
            optim.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optim.step()
            step += 1
            sums += np.array([float(x.detach()) for x in (loss, nll, v_loss, agree)]) * chunk.size
            count += chunk.size
        model.eval()
        val = np.zeros(3)
        if val_rows.size:
            with torch.no_grad():
                for chunk in np.array_split(val_rows, max(1, math.ceil(val_rows.size / 4096))):
                    _, nll, v_loss, agree = _batch_loss(model, data, chunk, opt.vf_coef)
                    val += np.array([float(nll), float(v_loss), float(agree)]) * chunk.size
            val /= val_rows.size
        tr = sums / max(count, 1)
        last = dict(zip(cols, [epoch, *tr.tolist(), *val.tolist(), round(time.perf_counter() - t0, 2)], strict=True))
        if log is not None:
            with log.open("a", newline="") as fh:
                csv.writer(fh).writerow([last[c] for c in cols])
        if not quiet:
            print(
                f"epoch {epoch}/{opt.epochs}: train nll {tr[1]:.3f} agree {tr[3]:.3f} | held-out nll {val[0]:.3f} "
                f"agree {val[2]:.3f} v_loss {val[1]:.3f} ({last['seconds']:.1f} s)",
                file=sys.stderr,
                flush=True,
            )
    return model, last


def sharpen(model: Any, temperature: float) -> None:
    """Divide the policy head by ``temperature`` (logits / T: below 1 plays the teacher's most likely moves more
    often; the fitted distribution spreads over moves the teacher chose in similar observations)."""
    with torch.no_grad():
        model.pi_w.weight.div_(temperature)
        model.pi_b.weight.div_(temperature)


def run(opt: Options, quiet: bool = False) -> dict[str, Any]:
    """Collect (or reuse ``OUT/data.npz``), fit, export; returns what ``meta.json`` records."""
    from experiments.train.selfplay.policy import export_npz

    opt.check()
    torch.set_num_threads(opt.threads)
    out = Path(opt.out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    extras = [load_data(p, opt.config()) for p in opt.extra_paths()]  # before collecting: a bad file fails at once
    data, collect_s, reused = load_or_collect(opt, quiet)
    collected = len(data)
    if extras:
        data = concat([data, *extras])
    loaded = time.perf_counter()
    data = with_features(data, opt.config(), opt.features, opt.workers)
    t1 = time.perf_counter()
    features_s = t1 - loaded
    model, last = fit(opt, data, out / "fit.csv", quiet)
    t2 = time.perf_counter()
    sharpen(model, opt.temperature)
    export_npz(model, opt.config(), out / "policy.npz", len(data))
    meta = {"options": asdict(opt), "decisions": len(data), "collected": collected,
            "games": int(np.unique(data.game).size),
            "collect_s": None if math.isnan(collect_s) else round(collect_s, 1), "data_reused": reused,
            "load_s": round(loaded - t0, 1) if reused else 0.0,
            "fit_s": round(t2 - t1, 1), "features_s": round(features_s, 1),
            "final": last}  # fmt: skip
    (out / "meta.json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
    return meta


def load_or_collect(opt: Options, quiet: bool = False) -> tuple[Data, float, bool]:
    """``OUT/data.npz`` if it was collected with ``opt``'s collection options, else a new collection written there
    atomically; with the collection's wall time (NaN if unknown) and whether the file was reused."""
    out = Path(opt.out)
    out.mkdir(parents=True, exist_ok=True)
    data_path, key = out / "data.npz", opt.collection_key()
    t0 = time.perf_counter()
    data: Data | None = None
    collect_s = float("nan")  # the collection's own wall time (recorded with the data, so a reuse reports it)
    if data_path.exists():
        with np.load(data_path, allow_pickle=False) as z:
            if json.loads(str(z["key"])) == key:
                data = Data.from_npz(z)
                collect_s = float(z["collect_s"]) if "collect_s" in z.files else collect_s
    reused = data is not None
    if data is None:
        if not quiet:
            print(f"collecting {opt.decisions:,} {opt.teacher} decisions with {opt.workers} workers",
                  file=sys.stderr, flush=True)  # fmt: skip
        data = collect_all(opt)
        collect_s = time.perf_counter() - t0
        tmp = out / "data.tmp.npz"
        np.savez(tmp, key=np.array(json.dumps(key, sort_keys=True)), collect_s=np.array(collect_s),
                 **data.arrays())  # type: ignore[arg-type]  # fmt: skip
        tmp.replace(data_path)
    return data, collect_s, reused


def parse_args(argv: list[str] | None = None) -> Options:
    d = Options()
    p = argparse.ArgumentParser(prog="python -m experiments.train.imitate", description=__doc__.splitlines()[0])
    p.add_argument("--game", default=d.game, help="base, sab2 or duel")
    p.add_argument("--players", type=int, default=None, help="seats per game (default: the game's default)")
    helps = {"teacher": "the scripted agent imitated", "partners": "comma-separated agents of the other seats",
             "teacher_share": "probability that a seat is the teacher", "decisions": "teacher decisions to collect",
             "num_envs": "games per worker in lock-step", "workers": "collecting processes",
             "temperature": "the exported policy's temperature (logits / T, folded into the weights)",
             "hidden": "width of the two tanh layers",
             "student": "DAgger: a policy.npz that plays a share of the teacher seats, labelled by the teacher",
             "student_share": "probability per teacher seat and game that the student plays it",
             "extra": "comma-separated earlier data.npz files fitted together with this collection",
             "embed": "width of a linear bottleneck before the policy heads (0: none)",
             "features": "belief features read besides the observation: bayes (base game) or '' for none",
             "epochs": "passes over the data", "batch": "minibatch rows",
             "init": "a policy.npz of the same shape to start the fit from ('': a fresh network)",
             "init_temperature": "the temperature --init was exported at (undone before fitting)",
             "soft_temperature": "> 0: label each decision with softmax(the teacher's per-move values / T) over "
                                 "the moves it valued (a search teacher), not its one choice; 0: the choice",
             "out": "output folder"}  # fmt: skip
    from dataclasses import fields

    for f in fields(Options):
        if f.name in ("game", "players", "role_heads", "universal"):  # universal: experiments.train.universal
            continue
        default = getattr(d, f.name)
        p.add_argument("--" + f.name.replace("_", "-"), type=type(default), default=default,
                       help=f"{helps.get(f.name, f.name.replace('_', ' '))} (default: {default})")  # fmt: skip
    p.add_argument("--no-role-heads", dest="role_heads", action="store_false", help="one head for every role")
    return Options(**vars(p.parse_args(argv)))


def main(argv: list[str] | None = None) -> int:
    try:
        opt = parse_args(argv)
        opt.check()
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    try:
        meta = run(opt)
    except DataFileError as e:  # an --extra file that is not imitation data of this game
        print(f"error: {e}", file=sys.stderr)
        return 2
    f = meta["final"]
    print(f"{meta['decisions']:,} decisions of {meta['games']:,} games (collect {meta['collect_s']} s, fit "
          f"{meta['fit_s']} s): held-out agreement {f['val_agree']:.3f}, nll {f['val_nll']:.3f}; "
          f"policy in {Path(opt.out) / 'policy.npz'}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
