"""Real SPARQL servers for the push tests, started on 127.0.0.1 and always stopped.

Oxigraph comes from PyPI (the `oxigraph` package of the test extra), Virtuoso from Debian
(`virtuoso-opensource`, which .ci/run installs). Each runs on a free port with its data
in a temporary folder; waits are bounded, and the process is terminated (then killed) when
the test session is done with it.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

HOST = "127.0.0.1"


@dataclass(frozen=True)
class Running:
    name: str
    base: str  # http://127.0.0.1:PORT
    query: str  # SPARQL query endpoint
    update: str  # SPARQL Update endpoint
    store: str  # Graph Store protocol endpoint
    user: str | None = None
    password: str | None = None
    started_in: float = 0.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return probe.getsockname()[1]


def _executable(name: str, hint: str) -> str:
    beside_python = Path(sys.executable).parent / name
    found = str(beside_python) if beside_python.exists() else shutil.which(name)
    if not found:
        raise RuntimeError(f"{name} is not installed: {hint}")
    return found


def _wait_until_ready(url: str, process: subprocess.Popen, log: Path, deadline: float) -> None:
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(
                f"{url}: the server exited early:\n{log.read_text(errors='replace')}"
            )
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except (urllib.error.URLError, OSError):
            time.sleep(0.05)
    raise RuntimeError(f"{url}: not ready in time:\n{log.read_text(errors='replace')[-2000:]}")


@contextmanager
def _run(command: list[str], cwd: Path, ready_url: str, timeout: float) -> Iterator[float]:
    log = cwd / "server.log"
    started = time.monotonic()
    with log.open("wb") as out:
        process = subprocess.Popen(command, cwd=cwd, stdout=out, stderr=subprocess.STDOUT)
    try:
        _wait_until_ready(ready_url, process, log, started + timeout)
        yield time.monotonic() - started
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)


@contextmanager
def oxigraph(folder: Path) -> Iterator[Running]:
    port = free_port()
    base = f"http://{HOST}:{port}"
    command = [
        _executable("oxigraph", "pip install -e '.[test]'"),
        "serve",
        "--location",
        str(folder / "data"),
        "--bind",
        f"{HOST}:{port}",
    ]
    with _run(command, folder, f"{base}/query?query=ASK%7B%7D", timeout=30) as seconds:
        yield Running(
            "oxigraph", base, f"{base}/query", f"{base}/update", f"{base}/store", started_in=seconds
        )


VIRTUOSO_INI = """\
[Database]
DatabaseFile = {d}/virtuoso.db
ErrorLogFile = {d}/virtuoso.log
LockFile = {d}/virtuoso.lck
TransactionFile = {d}/virtuoso.trx
xa_persistent_file = {d}/virtuoso.pxa
[TempDatabase]
DatabaseFile = {d}/virtuoso-temp.db
TransactionFile = {d}/virtuoso-temp.trx
[Parameters]
ServerPort = {host}:{sql_port}
DisableUnixSocket = 1
NumberOfBuffers = 2000
MaxDirtyBuffers = 1200
DirsAllowed = .
[HTTPServer]
ServerPort = {host}:{http_port}
ServerThreads = 4
Charset = UTF-8
[SPARQL]
ResultSetMaxRows = 100000
MaxQueryExecutionTime = 60
"""


@contextmanager
def virtuoso(folder: Path) -> Iterator[Running]:
    """Virtuoso with a fresh database: its `dba` account has the password `dba`."""
    http_port, sql_port = free_port(), free_port()
    (folder / "virtuoso.ini").write_text(
        VIRTUOSO_INI.format(d=folder, host=HOST, sql_port=sql_port, http_port=http_port),
        "utf-8",
    )
    base = f"http://{HOST}:{http_port}"
    command = [
        _executable("virtuoso-t", "apt-get install virtuoso-opensource (.ci/run does)"),
        "-f",
        "-c",
        str(folder / "virtuoso.ini"),
    ]
    with _run(command, folder, f"{base}/sparql?query=ASK%7B%7D", timeout=90) as seconds:
        yield Running(
            "virtuoso",
            base,
            f"{base}/sparql",
            f"{base}/sparql-auth",
            f"{base}/sparql-graph-crud-auth",
            user="dba",
            password="dba",
            started_in=seconds,
        )
