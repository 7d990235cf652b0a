"""Shared fixtures: write response lines to a landing folder, ingest, open the warehouse, or
read lines into views held in memory (`views`)."""

import json
import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import duckdb
import pytest

from tests import memory_lake
from transforms import warehouse
from transforms.ingest import IngestReport, ingest
from transforms.lake import Lake

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures"
REAL_FIXTURES = FIXTURES / "real"
"""Small real traces kept in the repository (see its SOURCES.md)."""
REAL_TRACES_SETTING = "RUNLAKE_REAL_TRACES"
"""The folder of the full collection of real traces: its tests run when it is set (and then
must find it), and are skipped when it is not."""
SAMPLES = REPO / "data_samples"
SAMPLE_TOOLS = SAMPLES / "tools.yaml"
REAL_TRACES = Path(os.environ[REAL_TRACES_SETTING]) if os.environ.get(REAL_TRACES_SETTING) \
    else None


@pytest.hookimpl(trylast=True)  # after tests/s3/conftest.py marks its tests slow
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The files holding slow tests first, each file's tests in their order. pyproject's
    addopts distribute whole files (`--dist loadfile`), so a module-scoped fixture (a Spark
    session, `dagster dev`, a lake a module builds once) is made once; the longest files
    starting first keep the two workers ending together."""
    slow = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow)


def to_line(item: Any) -> bytes:
    if isinstance(item, bytes):
        return item
    if isinstance(item, str):
        return item.encode()
    return json.dumps(item, ensure_ascii=False).encode()


@pytest.fixture
def write_lines(tmp_path: Path) -> Callable[..., Path]:
    """Write items (dicts as JSON, str/bytes as-is) as one response JSONL file."""

    def write(items: list[Any], name: str = "a.responses.jsonl", folder: str = "landing",
              terminator: bytes = b"\n") -> Path:
        path = tmp_path / folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"".join(to_line(i) + terminator for i in items))
        return path

    return write


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def run_ingest(home: Path) -> Callable[..., IngestReport]:
    def run(*paths: Path, **kw: Any) -> IngestReport:
        return ingest(list(paths), home, **kw)

    return run


@pytest.fixture
def query(home: Path) -> Callable[..., list[tuple[Any, ...]]]:
    """Run SQL against the warehouse read-only, with bound parameters."""

    def q(sql: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
        con: duckdb.DuckDBPyConnection = warehouse.connect(home)
        try:
            return con.execute(sql, params or []).fetchall()
        finally:
            con.close()

    return q


class MemoryViews:
    """Input files read by the ingest's own per-line code and every view of sql/ built over
    their rows in memory (tests/memory_lake.py): no Delta commit, no warehouse file. For the
    tests of what the rows and views hold; the lake's own behaviour (commits, re-ingests,
    crashes, the ingest's report) is tested through `ingest`."""

    def __init__(self) -> None:
        self.con: duckdb.DuckDBPyConnection | None = None

    def load(self, *paths: Path, tools: Path | None = None) -> None:
        """Read `paths` (files or folders), as one ingest into an empty lake would."""
        self.close()
        self.con = memory_lake.connect(list(paths), tools)

    def __call__(self, sql: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
        assert self.con is not None, "load() the input first"
        return self.con.execute(sql, params or []).fetchall()

    def close(self) -> None:
        if self.con is not None:
            self.con.close()
            self.con = None


@pytest.fixture
def views() -> Iterator[MemoryViews]:
    """`views.load(*paths)`, then `views(sql, params)`: see MemoryViews."""
    got = MemoryViews()
    try:
        yield got
    finally:
        got.close()


@dataclass(frozen=True)
class SamplesLake:
    """data_samples/ ingested with data_samples/tools.yaml: its home and the ingest's report."""

    home: Path
    report: IngestReport


@pytest.fixture(scope="session")
def samples_lake(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SamplesLake]:
    """The samples' lake and warehouse, ingested once per test session (per xdist worker) and
    shared by the tests that only read it. READ ONLY: a test that changes a home copies this
    one (`shutil.copytree`) or ingests its own. A test that wrote to it fails the session:
    the lake's version and every file of the home are compared at the end."""
    home = tmp_path_factory.mktemp("samples-lake") / "home"
    report = ingest([SAMPLES], home, tools=SAMPLE_TOOLS)
    before = (Lake(home).tables_at(), sorted(_listing(home)))
    yield SamplesLake(home, report)
    after = (Lake(home).tables_at(), sorted(_listing(home)))
    assert after == before, "a test wrote to the shared samples lake (copy it instead)"


def _listing(home: Path) -> list[str]:
    """Every file of a home but its reports, with its size and modification time."""
    return [f"{p.relative_to(home)} {p.stat().st_size} {p.stat().st_mtime_ns}"
            for p in home.rglob("*") if p.is_file() and p.relative_to(home).parts[0] != "reports"]


@pytest.fixture
def webhook(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[dict[str, Any]]]:
    """A webhook on 127.0.0.1, named by RUNLAKE_WEBHOOK_URL: what it receives, as
    {"type": Content-Type, "body": the JSON body} per request."""
    received: list[dict[str, Any]] = []

    class Hook(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            body = self.rfile.read(int(self.headers["Content-Length"]))
            received.append({"type": self.headers["Content-Type"], "body": json.loads(body)})
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Hook)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("RUNLAKE_WEBHOOK_URL", f"http://127.0.0.1:{server.server_port}/hook")
    try:
        yield received
    finally:
        server.shutdown()
        server.server_close()
