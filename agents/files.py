"""Opening files named by a user (``ppo:``/``learned:`` specs, logs, replays, checkpoints): regular files of bounded
size only.

``Path.open`` on a FIFO with no writer blocks forever, on ``/dev/zero`` or ``/dev/urandom`` reads without end, and a
directory fails with an OSError deep in a library; :func:`open_regular` answers all of them with one
:class:`FileRefusedError` naming the path and what it is, before any byte is read. Lives in ``agents`` so that both
the agents (which import only ``saboteur_env``) and ``experiments`` (which import agents) can use it.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

__all__ = ["FileRefusedError", "open_regular"]


class FileRefusedError(ValueError):
    """A path that is not read: missing, not a regular file, too large or unreadable (``problem`` says which)."""

    def __init__(self, path: str | Path, problem: str) -> None:
        super().__init__(f"{path} {problem}")
        self.path = Path(path)
        self.problem = problem

    def __reduce__(self) -> tuple[type, tuple[Path, str]]:
        return type(self), (self.path, self.problem)


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):  # fmt: skip
        if test(mode):
            return name
    return "not a regular file"


def open_regular(path: str | Path, max_bytes: int) -> BinaryIO:
    """``path`` opened for binary reading if it is a regular file of at most ``max_bytes`` bytes (symbolic links are
    followed); :class:`FileRefusedError` otherwise. The checks use the opened descriptor, so the file cannot be
    swapped for another between the check and the read."""
    try:
        # O_NONBLOCK: opening a FIFO without a writer returns at once instead of blocking; fstat then refuses it.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise FileRefusedError(path, "does not exist") from None
    except OSError as err:
        raise FileRefusedError(path, f"cannot be opened ({err.strerror or err})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise FileRefusedError(path, f"is {_kind(st.st_mode)}; expected a regular file")
        if st.st_size > max_bytes:
            raise FileRefusedError(path, f"is {st.st_size} bytes; at most {max_bytes} are read")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def write_atomic(path: Path, write: Callable[[Any], None]) -> None:
    """``write(fh)`` into a temporary file beside ``path``, fsync-ed, renamed over ``path``, the folder fsync-ed: a
    kill or power loss at any instant leaves the old file or the new one, never a torn one under the real name."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with tmp.open("wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(fd)  # the rename itself
    finally:
        os.close(fd)
