"""`runlake forget`: a file's rows leave every table in one lake version, and come back when
the file is ingested again."""

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.transforms.test_lake import table_digests
from transforms import warehouse
from transforms.cli import app
from transforms.contracts.schemas import TABLES
from transforms.errors import InputError
from transforms.forget import forget
from transforms.ingest import ingest
from transforms.lake import Lake, history

REPO = Path(__file__).resolve().parents[2]
DAYS = ("2026-11-14", "2026-11-15")
TOOLS = REPO / "data_samples" / "tools.yaml"


@pytest.fixture
def landing(tmp_path: Path) -> Path:
    for d in DAYS:
        shutil.copytree(REPO / "data_samples" / d, tmp_path / "landing" / d)
    return tmp_path / "landing"


def _rows_of(home: Path, source: str) -> dict[str, int]:
    con = warehouse.connect(home)
    try:
        return {t: con.execute(f"SELECT count(*) FROM {t} WHERE source_file = ?",
                               [source]).fetchone()[0]
                for t in TABLES if "source_file" in {c.name for c in TABLES[t].columns}}
    finally:
        con.close()


def test_forget_removes_a_files_rows_everywhere_and_ingest_brings_them_back(
        tmp_path: Path, landing: Path) -> None:
    home = tmp_path / "home"
    ingest([landing], home, tools=TOOLS)
    before = table_digests(home)
    bad = landing / DAYS[0] / "refund-agent.responses.jsonl"
    source = bad.resolve().as_posix()
    had = _rows_of(home, source)
    assert had["runs"] > 0 and had["messages"] > 0 and had["flags"] > 0
    assert had["ingest_files"] == 1

    report = forget([bad], home)
    assert report.files == [source]
    assert report.rows_removed["runs"] == had["runs"]
    assert all(n == 0 for n in _rows_of(home, source).values())
    assert history(Lake(home), 1)[0]["action"] == "forget"
    # Other files' rows are untouched.
    other = (landing / DAYS[1] / "refund-agent.responses.jsonl").resolve().as_posix()
    assert _rows_of(home, other)["runs"] > 0

    # The file is read again by the next ingest of the folder: the lake is as before.
    ingest([landing], home, tools=TOOLS)
    assert table_digests(home) == before


def test_forget_a_folder_and_a_file_that_no_longer_exists(tmp_path: Path,
                                                           landing: Path) -> None:
    home = tmp_path / "home"
    ingest([landing], home, tools=TOOLS)
    gone = landing / DAYS[1] / "research-agent.otlp.jsonl"
    gone.unlink()
    assert forget([gone], home).files == [gone.resolve().as_posix()]
    report = forget([landing / DAYS[0]], home)
    assert report.files and all(f.startswith((landing / DAYS[0]).resolve().as_posix() + "/")
                                for f in report.files)
    con = warehouse.connect(home)
    try:
        days = {r[0].isoformat() for r in con.execute(
            "SELECT DISTINCT day FROM ingest_files").fetchall()}
    finally:
        con.close()
    assert days == {DAYS[1]}


def test_forget_of_an_unknown_path_changes_nothing(tmp_path: Path, landing: Path) -> None:
    home = tmp_path / "home"
    ingest([landing], home, tools=TOOLS)
    version = history(Lake(home), 1)[0]["version"]
    with pytest.raises(InputError, match="no ingested file"):
        forget([landing / DAYS[0] / "a.responses.jsonl", tmp_path / "elsewhere.jsonl"], home)
    assert history(Lake(home), 1)[0]["version"] == version
    result = CliRunner().invoke(app, ["forget", "--home", str(home), str(tmp_path / "x")])
    assert result.exit_code == 2
    assert result.output.startswith("error: ") and "nothing was forgotten" in result.output


# forget in a child process, SIGKILLed right before (or after) one call.
KILLED_FORGET = """
import os, signal, sys
from pathlib import Path
from transforms import forget, lake, warehouse

where, name, when = sys.argv[1], sys.argv[2], sys.argv[3]
target = {"warehouse": warehouse, "Lake": lake.Lake}[where]
real = getattr(target, name)

def killed(*args, **kw):
    if when == "before":
        os.kill(os.getpid(), signal.SIGKILL)
    out = real(*args, **kw)
    os.kill(os.getpid(), signal.SIGKILL)
    return out

setattr(target, name, killed)
forget.forget([Path(sys.argv[5])], Path(sys.argv[4]))
"""


def _killed_forget(home: Path, path: Path, where: str, name: str, when: str) -> None:
    import os
    import subprocess
    import sys

    child = subprocess.run([sys.executable, "-c", KILLED_FORGET, where, name, when, str(home),
                            str(path)], capture_output=True, timeout=120,
                           env={**os.environ, "PYTHONPATH": str(REPO)})
    assert child.returncode == -9, child.stderr.decode()[-2000:]


def _two_files(tmp_path: Path) -> tuple[Path, Path, Path]:
    import json

    from tests.transforms.test_lake import run

    folder = tmp_path / "landing"
    folder.mkdir()
    secret, other = folder / "secret.responses.jsonl", folder / "other.responses.jsonl"
    secret.write_text(json.dumps(run("s1", "2026-11-20", "a secret")) + "\n")
    other.write_text(json.dumps(run("o1", "2026-11-20")) + "\n")
    home = tmp_path / "home"
    ingest([folder], home, workers=1)
    return home, secret, other


def _run_ids(home: Path) -> list[str]:
    con = warehouse.connect(home)
    try:
        return [r[0] for r in con.execute("SELECT run_id FROM runs ORDER BY 1").fetchall()]
    finally:
        con.close()


def test_a_forget_killed_after_its_commit_serves_no_forgotten_row_and_a_rerun_finishes(
        tmp_path: Path) -> None:
    """Killed after its commit and before the warehouse file was built again: no reader sees
    the forgotten rows (the file is stale, so readers make the views in memory over the
    newest lake version, writing nothing), and running forget again
    finishes the job and says so, rather than that no ingested file has the path."""
    home, secret, _ = _two_files(tmp_path)
    assert _run_ids(home) == ["o1", "s1"]
    _killed_forget(home, secret, "warehouse", "publish", "before")
    assert history(Lake(home), 1)[0]["action"] == "forget"
    assert _run_ids(home) == ["o1"]
    res = CliRunner().invoke(app, ["sql", "select count(*) from runs where run_id = 's1'",
                                   "--home", str(home), "--format", "csv"])
    assert res.exit_code == 0 and res.output.splitlines()[-1] == "0", res.output
    res = CliRunner().invoke(app, ["forget", "--home", str(home), str(secret)])
    assert res.exit_code == 0, res.output
    assert f"forgot {secret.resolve().as_posix()}" in res.output
    assert _run_ids(home) == ["o1"]
    assert warehouse.is_current(home)
    # Forgotten once is forgotten: again, the same answer, and nothing committed.
    version = history(Lake(home), 1)[0]["version"]
    res = CliRunner().invoke(app, ["forget", "--home", str(home), str(secret)])
    assert res.exit_code == 0 and "forgot" in res.output, res.output
    assert history(Lake(home), 1)[0]["version"] == version


def test_a_forget_killed_before_its_commit_forgot_nothing_and_a_rerun_forgets(
        tmp_path: Path) -> None:
    home, secret, _ = _two_files(tmp_path)
    _killed_forget(home, secret, "Lake", "commit_table", "before")
    assert history(Lake(home), 1)[0]["action"] == "ingest"
    assert _run_ids(home) == ["o1", "s1"]
    report = forget([secret], home)
    assert report.files == [secret.resolve().as_posix()] and report.rows_removed["runs"] == 1
    assert _run_ids(home) == ["o1"]


def test_a_forget_refused_before_its_commit_changes_nothing(tmp_path: Path) -> None:
    home, secret, _ = _two_files(tmp_path)
    before = history(Lake(home))
    with pytest.raises(InputError, match="retention"):
        forget([secret], home, retention_hours=float("inf"))
    assert history(Lake(home)) == before
    assert _run_ids(home) == ["o1", "s1"]
