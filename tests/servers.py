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
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
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
{parameters}[HTTPServer]
ServerPort = {host}:{http_port}
ServerThreads = 4
Charset = UTF-8
[SPARQL]
ResultSetMaxRows = 100000
MaxQueryExecutionTime = 60
"""


@contextmanager
def virtuoso(folder: Path, parameters: str = "") -> Iterator[Running]:
    """Virtuoso with a fresh database: its `dba` account has the password `dba`.
    `parameters` are more lines of the ini file's [Parameters] section."""
    http_port, sql_port = free_port(), free_port()
    (folder / "virtuoso.ini").write_text(
        VIRTUOSO_INI.format(
            d=folder, host=HOST, sql_port=sql_port, http_port=http_port, parameters=parameters
        ),
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


# ---- a wire between a client and a server ----------------------------------------------------


@dataclass
class Received:
    """One HTTP request as the server behind a `Wire` received it."""

    connection: int  # which client connection carried it (1, 2, …)
    method: str
    target: str
    headers: dict[str, str]  # names lowercased
    size: int  # bytes of the body
    body: bytes = b""  # the body itself, when the wire keeps bodies


class Wire:
    """A TCP proxy on 127.0.0.1 in front of a server, which reads the requests that cross it.

    Requests must carry a Content-Length (or no body), as kgraph's do. The wire counts the
    client connections, the requests and every byte sent to the server, and can act on a
    request before passing it on: `cut(request)` true drops the connection after half of
    that request's body (a server that goes away mid-upload); `hold(request)` true stops
    there, sets `held` and waits for `release()` (a test kills the client meanwhile), then
    passes the request on when `release(forward=True)`, else drops it with the connection.
    Responses go back untouched. Its threads end when the wire is closed.
    """

    def __init__(
        self,
        upstream: str,
        keep_bodies: bool = False,
        cut: Callable[[Received], bool] | None = None,
        hold: Callable[[Received], bool] | None = None,
    ) -> None:
        parts = urllib.parse.urlsplit(upstream)
        self.upstream = (parts.hostname or HOST, parts.port or 80)
        self.keep_bodies = keep_bodies
        self.cut, self.hold = cut, hold
        self.received: list[Received] = []
        self.connections = 0
        self.bytes_in = 0  # everything the client sent to the server: heads and bodies
        self.held = threading.Event()
        self._released = threading.Event()
        self._forward_held = False
        self._lock = threading.Lock()
        self._listener = socket.create_server((HOST, 0))
        self.port = self._listener.getsockname()[1]
        self.base = f"http://{HOST}:{self.port}"
        self._closed = False
        self._sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def url(self, upstream_url: str) -> str:
        """The same address, through the wire."""
        parts = urllib.parse.urlsplit(upstream_url)
        return urllib.parse.urlunsplit(("http", f"{HOST}:{self.port}", *parts[2:]))

    def release(self, forward: bool = False) -> None:
        self._forward_held = forward
        self._released.set()

    def close(self) -> None:
        self._closed = True
        self._released.set()
        self._listener.close()
        with self._lock:
            for s in self._sockets:
                _close(s)

    def __enter__(self) -> Wire:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                self.connections += 1
                number = self.connections
            threading.Thread(target=self._serve, args=(client, number), daemon=True).start()

    def _serve(self, client: socket.socket, number: int) -> None:
        try:
            server = socket.create_connection(self.upstream, timeout=600)
        except OSError:
            _close(client)
            return
        with self._lock:
            self._sockets += [client, server]
        threading.Thread(target=_pipe, args=(server, client), daemon=True).start()
        reader = client.makefile("rb")
        try:
            while True:
                head = _read_head(reader)
                if head is None:
                    return
                request_line, headers = head
                method, target, _ = request_line.split(" ", 2)
                size = int(headers.get("content-length", "0"))
                raw_head = _raw_head(request_line, headers)
                request = Received(number, method, target, headers, size)
                with self._lock:
                    self.bytes_in += len(raw_head)
                if self.cut and self.cut(request):
                    half = reader.read(size // 2)
                    with self._lock:
                        self.bytes_in += len(half)
                        self.received.append(request)
                    server.sendall(raw_head + half)
                    time.sleep(0.2)  # the server has read the part it will ever get
                    return
                body = reader.read(size)
                if len(body) < size:
                    return  # the client went away mid-body
                request.body = body if self.keep_bodies else b""
                with self._lock:
                    self.bytes_in += size
                    self.received.append(request)
                if self.hold and self.hold(request):
                    self.held.set()
                    self._released.wait()
                    if not self._forward_held or self._closed:
                        return
                server.sendall(raw_head + body)
        except (OSError, ValueError):
            return
        finally:
            _close(client)
            _close(server)


def _read_head(reader) -> tuple[str, dict[str, str]] | None:
    line = reader.readline(65536)
    if not line:
        return None
    request_line = line.decode("latin-1").rstrip("\r\n")
    headers: dict[str, str] = {}
    while True:
        line = reader.readline(65536)
        if line in (b"\r\n", b"\n", b""):
            break
        name, _, value = line.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    if "chunked" in headers.get("transfer-encoding", ""):
        raise ValueError("the wire reads only requests with a Content-Length")
    return request_line, headers


def _raw_head(request_line: str, headers: dict[str, str]) -> bytes:
    lines = [request_line, *(f"{name}: {value}" for name, value in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(1 << 16):
            sink.sendall(data)
    except OSError:
        pass
    finally:
        _close(sink)
        _close(source)


def _close(s: socket.socket) -> None:
    with suppress(OSError):
        s.shutdown(socket.SHUT_RDWR)
    s.close()
