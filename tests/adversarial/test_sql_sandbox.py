"""`runlake sql` runs other people's queries in DuckDB's sandbox: the lake's files are
readable, nothing else is, nothing is written, and no query can lift the sandbox."""

import json
from collections.abc import Callable
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from transforms import db
from transforms.cli import app

RUNNER = CliRunner()
LINE = {"run_id": "r1", "agent": "a", "outcome": {"status": "passed"},
        "response": {"final_response": "ok", "messages": [{"role": "assistant", "content": "ok"}]}}


def _files(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_file()}


@pytest.fixture
def lake_home(write_lines: Callable[..., Path], home: Path) -> Path:
    assert RUNNER.invoke(app, ["ingest", str(write_lines([LINE])), "--home",
                               str(home)]).exit_code == 0
    return home


def test_hostile_queries_get_one_line_and_write_nothing(lake_home: Path,
                                                        tmp_path: Path) -> None:
    """Writes (COPY, EXPLAIN ANALYZE COPY, also into the lake), ATTACH, INSTALL, SET and reads
    outside the lake: each a one-line error, and not one file appears."""
    secret = tmp_path / "secret.csv"
    secret.write_text("password\nhunter2\n")
    before = _files(tmp_path)
    lake = lake_home.resolve() / "lake"
    queries = [
        f"EXPLAIN ANALYZE COPY (select 1) TO '{tmp_path / 'x.csv'}'",
        f"EXPLAIN (ANALYZE) COPY (select 1) TO '{lake / 'runs' / 'x.parquet'}'",
        f"COPY (select 1) TO '{tmp_path / 'y.csv'}'",
        f"ATTACH '{tmp_path / 'other.duckdb'}' AS other",
        "INSTALL httpfs",
        "SET enable_external_access = true",
        "select * from read_csv('/etc/passwd')",
        "select * from read_text('/etc/passwd')",
        f"select * from read_csv('{lake}/../../secret.csv')",
        f"select * from read_csv('{secret}')",
    ]
    for query in queries:
        res = RUNNER.invoke(app, ["sql", query, "--home", str(lake_home)])
        assert res.exit_code in (1, 2), (query, res.output)
        assert len(res.output.strip().splitlines()) == 1, (query, res.output)
        assert res.output.startswith("error:"), (query, res.output)
        assert "root:" not in res.output and "hunter2" not in res.output
    assert _files(tmp_path) == before


def test_ordinary_queries_still_work(lake_home: Path) -> None:
    """Views read the lake's files by path, inside the sandbox; --as-of too, on its own
    connection, with the same sandbox."""
    for args in (["select status, count(*) from runs group by 1"],
                 ["select * from v_pass_rates"], ["describe runs"], ["show tables"],
                 ["EXPLAIN ANALYZE select count(*) from flags"], ["explain (select 1)"],
                 ["select count(*) from runs", "--as-of", "1"]):
        res = RUNNER.invoke(app, ["sql", *args, "--home", str(lake_home)])
        assert res.exit_code == 0, (args, res.output)
    res = RUNNER.invoke(app, ["sql", "select * from read_csv('/etc/passwd')", "--as-of", "1",
                              "--home", str(lake_home)])
    assert res.exit_code == 1 and "root:" not in res.output
    assert "disabled by configuration" in res.output


def test_a_sandboxed_connection_cannot_be_unlocked(tmp_path: Path) -> None:
    """The folders given stay readable; no statement can change the settings or reach out."""
    readable = tmp_path / "lake"
    readable.mkdir()
    (readable / "t.csv").write_text("a\n1\n")
    temp = tmp_path / "temp"
    temp.mkdir()
    con = duckdb.connect(config={"temp_directory": str(temp)})
    try:
        db.sandbox(con, [readable], temp)
        assert con.execute(f"select a from read_csv('{readable / 't.csv'}')").fetchall() == [
            (1,)]
        for statement in ("SET enable_external_access = true", "SET lock_configuration = false",
                          "SET allowed_directories = ['/']", "SET autoload_known_extensions = true",
                          f"COPY (select 1) TO '{tmp_path / 'out.csv'}'",
                          "select * from read_csv('/etc/passwd')"):
            with pytest.raises(duckdb.Error):
                con.execute(statement).fetchall()
    finally:
        con.close()
    assert not (tmp_path / "out.csv").exists()


def test_statement_kinds_read_what_an_explain_runs() -> None:
    """EXPLAIN ANALYZE runs what it explains: an EXPLAIN is a query only when that is one."""
    from transforms.warehouse.query import statement_kinds as _statement_kinds

    con = duckdb.connect()
    try:
        assert _statement_kinds(con, "EXPLAIN ANALYZE select 1") == ["EXPLAIN"]
        assert _statement_kinds(con, "explain (analyze, format json) (select 1)") == ["EXPLAIN"]
        assert _statement_kinds(con, "EXPLAIN ANALYZE COPY (select 1) TO 'x'") == [
            "EXPLAIN of COPY"]
        assert _statement_kinds(con, "EXPLAIN (ANALYZE false) COPY (select 1) TO 'x'") == [
            "EXPLAIN of COPY"]
        assert _statement_kinds(con, "EXPLAIN /* c */ ANALYZE -- d\n COPY (select 1) TO 'x'"
                                ) == ["EXPLAIN of COPY"]
        assert _statement_kinds(con, "EXPLAIN /* c */ ANALYZE select 1") == ["EXPLAIN"]
        assert _statement_kinds(con, "EXPLAIN ANALYZE CREATE TABLE t AS SELECT 1") == [
            "EXPLAIN of CREATE"]
    finally:
        con.close()


def test_no_query_reads_a_temp_folder_outside_the_lake(lake_home: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """DuckDB lets a sandboxed connection read its temp folder: `.tmp` in the current folder
    for the in-memory connection of --as-of, `warehouse.duckdb.tmp` in the home for the
    published one. Neither holds anything a query may read: each query spills into a private
    folder of its own, made empty and removed after it."""
    cwd = tmp_path / "cwd"
    (cwd / ".tmp").mkdir(parents=True)
    (cwd / ".tmp" / "s.txt").write_text("SECRET-CWD\n")
    (lake_home / "warehouse.duckdb.tmp").mkdir()
    (lake_home / "warehouse.duckdb.tmp" / "s.txt").write_text("SECRET-HOME\n")
    monkeypatch.chdir(cwd)
    targets = [".tmp/s.txt", str(cwd / ".tmp" / "s.txt"),
               str(lake_home / "warehouse.duckdb.tmp" / "s.txt")]
    for extra in ([], ["--as-of", "1"]):
        for target in targets:
            for reader in ("read_text", "read_csv", "read_blob"):
                query = f"select * from {reader}('{target}')"
                res = RUNNER.invoke(app, ["sql", query, *extra, "--home", str(lake_home)])
                assert res.exit_code == 1, (query, extra, res.output)
                assert "SECRET" not in res.output, (query, extra, res.output)
                assert "disabled by configuration" in res.output, (query, extra, res.output)
        # What the sandbox allows: the lake, and a temp folder no other query has seen.
        res = RUNNER.invoke(app, ["sql", "select current_setting('allowed_directories')",
                                  *extra, "--format", "json", "--home", str(lake_home)])
        assert res.exit_code == 0, res.output
        allowed = json.loads(res.output)[0]["current_setting('allowed_directories')"]
        lake = f"{lake_home.resolve() / 'lake'}/"
        assert lake in allowed and len(allowed) == 2, allowed
        temp = Path(next(a for a in allowed if a != lake))
        assert not temp.exists(), temp  # removed after its query
        assert cwd not in temp.parents and lake_home.resolve() not in temp.parents
    assert not (cwd / ".tmp" / "duckdb_temp").exists()
    assert sorted(p.name for p in (cwd / ".tmp").iterdir()) == ["s.txt"]


def test_a_connection_with_a_shared_temp_folder_is_not_sandboxed(tmp_path: Path) -> None:
    """A connection opened without its private temp folder (DuckDB's default, `.tmp` in the
    current folder) would leave that folder readable: the sandbox refuses it."""
    con = duckdb.connect()
    try:
        with pytest.raises(ValueError, match="private temp folder"):
            db.sandbox(con, [tmp_path], tmp_path / "temp")
    finally:
        con.close()
