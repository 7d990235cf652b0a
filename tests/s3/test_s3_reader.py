"""How DuckDB reads a lake on object storage (transforms.objectstore.reach): with its own httpfs
extension when it loads (from DuckDB's extension folder, or the file inside the PyPI package
duckdb-extension-httpfs of the same version), else through s3fs; both answer the same; when
neither works, one line says why."""

import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from tests.conftest import REPO
from transforms import objectstore, warehouse
from transforms.errors import RunlakeError
from transforms.ingest import ingest

SAMPLES = REPO / "data_samples"
HTTPFS = bool(objectstore.httpfs_binaries())


def _fresh_route(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forget the route this process found (each test chooses its own)."""
    monkeypatch.setattr(objectstore, "_ROUTE", {})


def _counts(con: duckdb.DuckDBPyConnection) -> tuple[int, ...]:
    row = con.execute("SELECT (SELECT count(*) FROM runs), (SELECT count(*) FROM messages), "
                      "(SELECT count(*) FROM flags), (SELECT count(*) FROM v_pass_rates)"
                      ).fetchone()
    assert row is not None
    return tuple(int(v) for v in row)


def _routes(con: duckdb.DuckDBPyConnection) -> tuple[bool, bool]:
    """(httpfs secret made, s3fs registered) on a connection."""
    secrets = {r[0] for r in con.execute("SELECT name FROM duckdb_secrets()").fetchall()}
    return objectstore.SECRET in secrets, objectstore.uses_s3fs(con)


@pytest.mark.skipif(not HTTPFS, reason="no duckdb-extension-httpfs for this DuckDB version")
def test_httpfs_and_s3fs_read_the_same(s3_home: str, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The warehouse file of an s3:// home and the in-memory views read the bucket through
    httpfs when it loads, and give the counts s3fs gives and a local home gives."""
    local = tmp_path / "local"
    ingest([SAMPLES], local, workers=1)
    _fresh_route(monkeypatch)
    ingest([SAMPLES], s3_home, workers=1)
    con = warehouse.connect(local)
    try:
        expected = _counts(con)
    finally:
        con.close()
    assert expected[0] > 0
    for route, made in (("", (True, False)), ("httpfs", (True, False)),
                        ("s3fs", (False, True))):
        _fresh_route(monkeypatch)
        monkeypatch.setenv(objectstore.ROUTE_ENV, route)
        for con in (warehouse.connect(s3_home), warehouse.in_memory(s3_home)):
            try:
                assert _routes(con) == made, route
                assert _counts(con) == expected, route
            finally:
                con.close()


def test_falls_back_to_s3fs_without_httpfs(s3_home: str,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """No httpfs file for this DuckDB (and none installed online): s3fs reads the bucket; asked
    for httpfs by RUNLAKE_S3_READER, one line says what to install."""
    ingest([SAMPLES / "2026-11-14"], s3_home, workers=1)
    _fresh_route(monkeypatch)
    monkeypatch.setattr(objectstore, "httpfs_binaries", lambda: [])
    # DuckDB's own extension folder of this test only: nothing installed there.
    monkeypatch.setattr(objectstore, "load_httpfs", _without_installed(objectstore.load_httpfs))
    con = warehouse.connect(s3_home)
    try:
        assert _routes(con) == (False, True)
        assert _counts(con)[0] > 0
    finally:
        con.close()
    _fresh_route(monkeypatch)
    monkeypatch.setenv(objectstore.ROUTE_ENV, "httpfs")
    with pytest.raises(RunlakeError) as e:
        warehouse.connect(s3_home)
    assert "\n" not in str(e.value)
    assert f"DuckDB {duckdb.__version__} cannot load its httpfs extension" in str(e.value)


def _without_installed(load):  # type: ignore[no-untyped-def]
    """`load_httpfs` on a connection whose extension folder is empty (so `LOAD httpfs` finds
    no extension an online install may have put in ~/.duckdb)."""
    def wrapped(con):  # type: ignore[no-untyped-def]
        import tempfile

        con.execute("SET extension_directory = ?", [tempfile.mkdtemp(prefix="no-ext-")])
        return load(con)
    return wrapped


def test_neither_route_says_so_in_one_line(s3_home: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without httpfs and without s3fs: one line; an unknown RUNLAKE_S3_READER: one line, also
    from the command line."""
    ingest([SAMPLES / "2026-11-14"], s3_home, workers=1)
    _fresh_route(monkeypatch)
    monkeypatch.setattr(objectstore, "httpfs_binaries", lambda: [])
    monkeypatch.setattr(objectstore, "load_httpfs", _without_installed(objectstore.load_httpfs))

    def no_s3fs() -> None:
        raise ImportError("No module named 's3fs'")

    monkeypatch.setattr(objectstore, "filesystem", no_s3fs)
    con = duckdb.connect()
    with pytest.raises(RunlakeError) as e:
        objectstore.reach(con)
    assert str(e.value) == ("DuckDB cannot read s3:// here: its httpfs extension does not load "
                            "and s3fs is not installed (No module named 's3fs')")
    monkeypatch.undo()
    env = {"RUNLAKE_HOME": s3_home, objectstore.ROUTE_ENV: "smoke-signals"}
    run = subprocess.run([str(Path(sys.executable).parent / "runlake"), "sql",
                          "select count(*) from runs"], capture_output=True, text=True,
                         env={**_env(), **env}, cwd=REPO)
    assert run.returncode != 0
    assert "Traceback" not in run.stderr
    assert "RUNLAKE_S3_READER='smoke-signals': choose httpfs or s3fs" in run.stderr


def _env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if not k.startswith("RUNLAKE_")}


def test_secret_of_the_settings() -> None:
    """The httpfs secret of an emulator's endpoint: host and port without the scheme, plain
    http when the URL says http, path-style URLs; quotes doubled. Of AWS itself: no endpoint."""
    sql = objectstore.secret_sql({"AWS_ENDPOINT_URL": "http://127.0.0.1:9000/",
                                   "AWS_ACCESS_KEY_ID": "key", "AWS_SECRET_ACCESS_KEY": "it's",
                                   "AWS_REGION": "us-east-1"})
    assert sql == ("CREATE OR REPLACE TEMPORARY SECRET runlake_s3 (TYPE s3, KEY_ID 'key', "
                   "SECRET 'it''s', REGION 'us-east-1', ENDPOINT '127.0.0.1:9000', "
                   "USE_SSL false, URL_STYLE 'path')")
    assert objectstore.secret_sql({"AWS_REGION": "eu-west-1",
                                    "AWS_SESSION_TOKEN": "t"}) == (
        "CREATE OR REPLACE TEMPORARY SECRET runlake_s3 (TYPE s3, SESSION_TOKEN 't', "
        "REGION 'eu-west-1')")
