"""`runlake import` on hostile sources: a one-line error or valid landing lines, never a
traceback, never a line the ingest would quarantine, and never some outputs written and
others not without saying so."""

import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from transforms.cli import app
from transforms.importers.known import IMPORTERS
from transforms.ingest import ingest

RUNNER = CliRunner()
TAU_BENCH = [{"task_id": 1, "trial": 0, "reward": 1.0, "info": {},
              "traj": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "ok"}]}]


def _import(fmt: str, *sources: Path, out: Path) -> Any:
    return RUNNER.invoke(app, ["import", fmt, *map(str, sources), "--out", str(out)])


def _one_line_error(res: Any) -> None:
    assert res.exit_code == 2, res.output
    assert len(res.output.strip().splitlines()) == 1, res.output
    assert res.output.startswith("error:") and "Traceback" not in res.output


@pytest.mark.parametrize("fmt", sorted(IMPORTERS))
def test_json_nested_100k_deep_is_one_line_for_every_format(fmt: str, tmp_path: Path) -> None:
    src = tmp_path / "deep.json"
    src.write_text("[" * 100_000 + "]" * 100_000)
    res = _import(fmt, src, out=tmp_path / "o")
    _one_line_error(res)
    assert "nested too deeply" in res.output and "nothing was written" in res.output
    assert list((tmp_path / "o").iterdir()) == []


def test_a_deep_member_of_an_eval_log_is_one_line(tmp_path: Path) -> None:
    src = tmp_path / "deep.eval"
    with zipfile.ZipFile(src, "w") as z:
        z.writestr("header.json", json.dumps({"eval": {"task": "t", "model": "m"}}))
        z.writestr("samples/1_epoch_1.json", "[" * 100_000 + "]" * 100_000)
    res = _import("inspect", src, out=tmp_path / "o")
    _one_line_error(res)
    assert "samples/1_epoch_1.json" in res.output and "nested too deeply" in res.output


@pytest.mark.parametrize(("fmt", "doc", "field"), [
    ("swe-agent", {"history": [{"role": "user", "content": "x"}], "info": {},
                   "trajectory": [{"execution_time": 1e308}]}, "execution_time"),
    ("inspect", {"eval": {"task": "t", "model": "m"}, "status": "success",
                 "samples": [{"id": 1, "total_time": 1e308, "messages": []}]}, "total_time"),
    ("tau2", {"info": {}, "tasks": [], "simulations": [
        {"id": "s1", "duration": 1e308, "messages": [], "reward_info": {"reward": 1.0}}]},
     "duration"),
])
def test_a_duration_no_count_can_hold_is_one_line(fmt: str, doc: Any, field: str,
                                                  tmp_path: Path) -> None:
    src = tmp_path / "huge.json"
    src.write_text(json.dumps(doc))
    res = _import(fmt, src, out=tmp_path / "o")
    _one_line_error(res)
    assert field in res.output and "out of range" in res.output
    assert list((tmp_path / "o").iterdir()) == []


def test_numbers_beyond_a_double_become_null_and_the_ingest_reads_every_line(
        tmp_path: Path) -> None:
    """1e999 reads as Infinity, which JSON does not allow: null, with the note NaN gets."""
    src = tmp_path / "inf.json"
    src.write_text('[{"task_id": 1, "reward": 1e999, "info": {"x": -1e999}, "traj": '
                   '[{"role": "user", "content": "hi"}, {"role": "assistant", '
                   '"content": "ok"}]}]')
    out = tmp_path / "o"
    res = _import("tau-bench", src, out=out)
    assert res.exit_code == 0, res.output
    assert "2 NaN or Infinity value(s)" in res.output
    text = (out / "inf.responses.jsonl").read_text()
    assert "Infinity" not in text and '"score": null' in text
    report = ingest([out], tmp_path / "home")
    assert [(f.lines, f.accepted, f.quarantined) for f in report.files] == [(1, 1, 0)]


def test_a_bad_source_among_several_writes_nothing(tmp_path: Path) -> None:
    """Every source is converted before any output is written: a later failure leaves no
    earlier output behind (nor a hidden part file), and the error says nothing was written."""
    good = tmp_path / "good.json"
    good.write_text(json.dumps(TAU_BENCH))
    bad = tmp_path / "bad.json"
    bad.write_text("[{")
    out = tmp_path / "o"
    res = _import("tau-bench", good, good, bad, out=out)
    _one_line_error(res)
    assert "bad.json" in res.output and "nothing was written" in res.output
    assert list(out.iterdir()) == []
    res = _import("tau-bench", good, good, out=out)
    assert res.exit_code == 0, res.output
    assert f"wrote 2 files to {out}" in res.output.replace("\n", "")
    assert sorted(p.name for p in out.iterdir()) == ["good-2.responses.jsonl",
                                                     "good.responses.jsonl"]
