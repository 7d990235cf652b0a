"""runlake's commands on an s3:// home: sql (sandboxed to the lake's prefix), report,
history, sql --as-of, doctor (object sizes instead of local files) and doctor --repair."""

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.transforms.test_lake_crash import landing_files
from transforms import warehouse
from transforms.cli import app
from transforms.ingest import ingest
from transforms.lake import Lake
from transforms.objectstore import filesystem

runner = CliRunner()


def _run(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.output


def test_commands_on_a_bucket(s3_home: str, tmp_path: Path) -> None:
    landing = tmp_path / "landing"
    ingest(landing_files(landing, 1), s3_home, workers=1)
    ingest(landing_files(landing, 2), s3_home, workers=1)
    code, out = _run("sql", "select count(*) as n from runs", "--home", s3_home,
                     "--format", "csv")
    assert code == 0 and out.split() == ["n", "8"], out
    # The sandbox: the lake's prefix only, no local file, no other prefix of the bucket.
    secret = tmp_path / "secret.csv"
    secret.write_text("a\n1\n")
    for query in (f"select * from read_csv('{secret}')",
                  f"select * from read_parquet('{s3_home}-other/x.parquet')",
                  f"copy (select 1) to '{s3_home}/lake/x.parquet'"):
        code, out = _run("sql", query, "--home", s3_home)
        assert code != 0, (query, out)
    code, out = _run("history", "--home", s3_home)
    assert code == 0 and "a.responses" in out, out
    versions = [line.split()[0] for line in out.splitlines() if line.strip()[:1].isdigit()]
    code, out = _run("sql", "select count(*) as n from runs", "--home", s3_home,
                     "--format", "csv", "--as-of", min(versions, key=int))
    assert code == 0 and out.split() == ["n", "7"], out
    code, out = _run("report", "--home", s3_home)
    assert code in (0, 3), out
    # The warehouse for Spark names each Delta table by its URL in the bucket.
    code, out = _run("views", "--dialect", "spark", "--home", s3_home)
    assert code == 0 and f"delta.`{s3_home}/lake/_lines/runs` VERSION AS OF" in out, out[:400]
    reports = list(warehouse.reports(s3_home).glob("nightly-*.html"))
    assert reports and reports[0].parent.parent == warehouse.path(s3_home).parent
    code, out = _run("doctor", "--home", s3_home)
    assert code == 0 and "nothing to repair" in out, out
    # A data file deleted from the bucket: found by its missing object, repaired by reading
    # the input files again.
    lake = Lake(s3_home)
    victim = lake.file_uris("messages")[0]
    filesystem().rm(victim.removeprefix("s3://"))
    code, out = _run("doctor", "--home", s3_home)
    assert code == 1 and "missing or truncated" in out, out
    code, out = _run("doctor", "--repair", "--home", s3_home)
    assert code == 0 and "repaired" in out, out
    code, out = _run("doctor", "--home", s3_home)
    assert code == 0, out
    code, out = _run("sql", "select count(*) as n from runs", "--home", s3_home,
                     "--format", "csv")
    assert code == 0 and out.split() == ["n", "8"], out


def test_a_bad_home_url_is_one_line(s3_endpoint: str) -> None:
    code, out = _run("history", "--home", "s3://b/../etc")
    assert code == 2 and "s3://" in out, out
    code, out = _run("history", "--home", "gs://bucket/x")
    assert code == 2 and "not supported" in out, out


def test_no_query_reads_a_local_temp_folder(s3_home: str, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """On an s3:// home too, neither the current folder's `.tmp` (--as-of) nor the local
    warehouse file's temp folder is readable: nothing local is."""
    ingest(landing_files(tmp_path / "landing", 1), s3_home, workers=1)
    cwd = tmp_path / "cwd"
    (cwd / ".tmp").mkdir(parents=True)
    (cwd / ".tmp" / "s.txt").write_text("SECRET\n")
    beside = warehouse.path(s3_home).with_name("warehouse.duckdb.tmp")
    beside.mkdir(parents=True, exist_ok=True)
    (beside / "s.txt").write_text("SECRET\n")
    monkeypatch.chdir(cwd)
    for extra in ([], ["--as-of", "1"]):
        for target in (".tmp/s.txt", str(beside / "s.txt")):
            code, out = _run("sql", f"select content from read_text('{target}')", *extra,
                             "--home", s3_home)
            assert code == 1 and "SECRET" not in out, (target, extra, out)
