"""The bluffing benchmark's protocol (docs/bluff.md): fixed, versioned data per game and player count - the opponent
pool, the deals per agent, the honesty model the pool believes - and the sealed deal seeds drawn from a secret.

Any change to what a protocol plays (its pool, its deals, the pool's honesty file, how seeds are drawn or seats are
taken) is a new :data:`VERSION`: every leaderboard row carries the version it was measured under, and rows of
different versions are never compared. The honesty file is pinned by its SHA-256: refitting it is a new version.

Deals. Deal ``i`` of a protocol is the public seed ``2**32 + (game_secret(secret, (VERSION, protocol, "deal", i))
mod 2**62)``: without the secret nothing tells which deals will be played (an agent cannot have been tuned on
them), with it the run is exactly reproducible; the offset keeps every deal away from the public seeds
``0 .. 2**32 - 1`` that tournaments and the honesty fit play (held out by construction; checked against the fit's
recorded seeds). The agents' own seeds are sealed by the tournament as always (spawned from the same secret and
the game's log key, never from the deal).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from agents.honesty import shipped_path
from saboteur_env.common.seeding import game_secret

VERSION = "bluff-v1"
SEED_OFFSET = 1 << 32  # deal seeds start here: tournaments and honesty fits use seeds below it
SEED_RANGE = 1 << 62


@dataclass(frozen=True)
class Protocol:
    """One game and player count. ``pool``: the opponents, one member per deal in turn (deal ``i`` plays
    ``pool[i % len(pool)]``); a base-game member is a (miner, saboteur) pair of names, Saboteur 2's and the Duel's
    one name.
    ``deals``: deals per benchmarked agent. ``honesty``: the fitted honesty file the pool's believers use (the
    ``+fit`` of their names), pinned by ``honesty_sha256``. ``fit_pool``: the same pool with the hand-set model,
    whose games the honesty file was fitted on (public seeds below ``SEED_OFFSET``)."""

    name: str
    game: str
    players: int
    pool: tuple[tuple[str, ...], ...]
    deals: int
    honesty_sha256: str

    @property
    def id(self) -> str:
        return f"{VERSION}/{self.name}"

    @property
    def honesty(self) -> Path:
        return shipped_path(self.game, self.players)

    @property
    def fit_pool(self) -> tuple[tuple[str, ...], ...]:
        return tuple(tuple(n.replace("+fit:", ":") for n in member) for member in self.pool)

    def honesty_digest(self) -> str | None:
        """The SHA-256 of the honesty file as it is on disk (None where it is missing)."""
        return hashlib.sha256(self.honesty.read_bytes()).hexdigest() if self.honesty.is_file() else None

    def check_honesty(self) -> None:
        """The shipped honesty file is the one this version pinned (``ValueError`` otherwise: refit = new version)."""
        digest = self.honesty_digest()
        if digest is None:
            raise ValueError(f"protocol {self.id}: honesty file {self.honesty} is missing (python -m "
                             f"experiments.bluff.honesty --protocol {self.name} --write)")  # fmt: skip
        if self.honesty_sha256 and digest != self.honesty_sha256:
            raise ValueError(f"protocol {self.id}: {self.honesty} has SHA-256 {digest[:12]}..., the protocol pinned "
                             f"{self.honesty_sha256[:12]}...: a refitted model is a new protocol VERSION")  # fmt: skip


# The protocols of this version. Deal counts are sized so that `python -m experiments.bluff --leaderboard` (its
# agents x 3 arms x deals, plus one pool arm) runs in about 20 minutes on one core: the intervals are wide.
PROTOCOLS: dict[str, Protocol] = {
    p.name: p
    for p in (
        Protocol("base-5", "base", 5, (("claims+fit:heuristic", "claims+fit:heuristic"),
                                       ("claims+fit:planner", "claims+fit:blocker")), 60,
                 "2046962c5f39bd6bb8109d3b6c5a723301d0e8f8c0061765bf4933fe5d749e9a"),
        Protocol("base-7", "base", 7, (("claims+fit:heuristic", "claims+fit:heuristic"),
                                       ("claims+fit:planner", "claims+fit:blocker")), 60,
                 "4825b8d956d0ff6d25629549fd3c8faae930199a5214066ea3812e90a43b27d0"),
        Protocol("sab2-6", "sab2", 6, (("claims+fit:heuristic",), ("claims+fit:believer",)), 60,
                 "3af0ef99d9fe8bc932560bead4dbd542998d4a8288dd7009fbec70c14e3e86eb"),
        Protocol("duel", "duel", 2, (("claims+fit:greedy",), ("claims+fit:believer",)), 30,
                 "39ec93b378415c5d502891eac50b91a5414c62d6bcb3f6972253159848eb136b"),
    )
}  # fmt: skip


def protocol(name: str) -> Protocol:
    """The protocol called ``name`` (``ValueError`` naming it and the valid ones)."""
    try:
        return PROTOCOLS[name]
    except KeyError:
        raise ValueError(f"protocol {name!r} is unknown in {VERSION}; valid: {', '.join(PROTOCOLS)}") from None


def protocol_for(game: str, players: int | None) -> Protocol:
    """The protocol of a game and player count (``players`` None: the game's first, base: 5 players)."""
    found = [p for p in PROTOCOLS.values() if p.game == game and players in (None, p.players)]
    if not found:
        valid = ", ".join(f"--game {p.game} --players {p.players}" for p in PROTOCOLS.values())
        raise ValueError(f"no {VERSION} protocol for game {game!r} with players {players!r}; valid: {valid}")
    return found[0]


def deal_seeds(p: Protocol, secret: int, deals: int | None = None) -> list[int]:
    """The public seeds of the protocol's first ``deals`` deals (default ``p.deals``) under ``secret``."""
    n = p.deals if deals is None else deals
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"deals={n!r} must be an int >= 1")
    return [SEED_OFFSET + game_secret(secret, (VERSION, p.name, "deal", i)) % SEED_RANGE for i in range(n)]


def pool_member(p: Protocol, deal: int) -> tuple[str, ...]:
    return p.pool[deal % len(p.pool)]


__all__ = ["PROTOCOLS", "SEED_OFFSET", "VERSION", "Protocol", "deal_seeds", "pool_member", "protocol",
           "protocol_for"]  # fmt: skip
