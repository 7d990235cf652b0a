"""A home path with ordinary characters works (a space as in ~/Library/Application Support, a
letter outside ASCII, quotes, a backtick, a lone %, :, ;, $, ~): delta-rs keeps its log paths
URL-encoded, runlake reads them as paths. What the lake's Delta tables cannot store in a path
(a control character such as a newline, a %XX escape, a #; a backslash and DuckDB's other glob
characters) is refused in one line
before anything is written, as is an empty home."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.transforms.test_lake import run
from transforms import warehouse
from transforms.cli import app
from transforms.errors import InputError
from transforms.ingest import ingest
from transforms.lake import Lake, doctor, history

ORDINARY = ["Application Support", "café é", 'say "hi"', "back`tick", "100% sure", "a:b;c",
            "it's", "$HOME ~"]
"""Folder names a home path may hold. One home lies under all of them, nested (one lake
instead of eight): a name the lake mishandles fails the test, the failure then shows which
by its path."""


def test_a_home_path_with_ordinary_characters_works(tmp_path: Path) -> None:
    landing = tmp_path / "landing"
    landing.mkdir()
    source = landing / "a.responses.jsonl"
    home = tmp_path.joinpath(*ORDINARY) / "warehouse"
    for text in ("v1", "v2"):
        source.write_text(json.dumps(run("a", "2026-11-20", text)) + "\n")
        ingest([source], home, workers=1)
    lake = Lake(home)
    assert doctor.check(lake) == []
    assert [v["version"] for v in history(lake)] == [2, 1]
    assert lake.vacuum(0) > 0  # the first version's files, replaced by the second
    assert doctor.check(lake) == []
    con = warehouse.connect(home)
    try:
        assert con.execute("SELECT run_id, final_response FROM runs").fetchall() == [
            ("a", "v2")]
        assert con.execute("SELECT count(*) FROM ingest_files").fetchone() == (1,)
    finally:
        con.close()
    res = CliRunner().invoke(app, ["sql", "select final_response from runs", "--home",
                                   str(home), "--format", "csv"])
    assert res.exit_code == 0 and res.output.splitlines() == ["final_response", "v2"], \
        res.output


@pytest.mark.parametrize("name", ["h%41pct", "h%2Fslash", "no#1", "new\nline", "tab\there",
                                  "cr\rhere", "back\\slash", "del\x7fete"])
def test_a_home_path_the_lake_cannot_store_is_refused_before_anything_is_written(
        tmp_path: Path, name: str) -> None:
    source = tmp_path / "a.responses.jsonl"
    source.write_text(json.dumps(run("a", "2026-11-20")) + "\n")
    home = tmp_path / name / "warehouse"
    with pytest.raises(InputError) as e:
        ingest([source], home, workers=1)
    assert "\n" not in str(e.value) and "\r" not in str(e.value)
    assert not (tmp_path / name).exists()
    res = CliRunner().invoke(app, ["ingest", str(source), "--home", str(home)])
    assert res.exit_code == 2, res.output
    assert res.output.startswith("error: ") and len(res.output.strip().splitlines()) == 1
    assert not (tmp_path / name).exists()


def test_an_empty_home_is_refused_and_nothing_is_written_in_the_current_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "in" / "a.responses.jsonl"
    source.parent.mkdir()
    source.write_text(json.dumps(run("a", "2026-11-20")) + "\n")
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    monkeypatch.setenv("RUNLAKE_HOME", "")
    for args in (["ingest", str(source)], ["ingest", str(source), "--home", ""]):
        res = CliRunner().invoke(app, args)
        assert res.exit_code == 2, res.output
        assert res.output.startswith("error: ") and "empty" in res.output
        assert len(res.output.strip().splitlines()) == 1
        assert list(here.iterdir()) == []
        monkeypatch.delenv("RUNLAKE_HOME", raising=False)
