"""Shared fixtures: write response lines to a landing folder, ingest, open the warehouse."""

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import pytest

from transforms import warehouse
from transforms.ingest import IngestReport, ingest

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures"
REAL_FIXTURES = FIXTURES / "real"
"""Small real traces kept in the repository (see its SOURCES.md)."""
REAL_TRACES_SETTING = "RUNLAKE_REAL_TRACES"
"""The folder of the full collection of real traces: its tests run when it is set (and then
must find it), and are skipped when it is not."""
REAL_TRACES = Path(os.environ[REAL_TRACES_SETTING]) if os.environ.get(REAL_TRACES_SETTING) \
    else None


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
