"""The same content under a new name is the same data: a renamed input file moves its rows to
the new name in one commit, a copy beside the original is skipped, and two copies in one
ingest are read once. Nothing is counted twice (spans, LLM calls, cost, findings)."""

import shutil
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from tests.conftest import REPO
from transforms import warehouse
from transforms.cli import app
from transforms.ingest import ingest

DAY = REPO / "data_samples" / "2026-11-20"
COUNTS = ("select (select count(*) from runs), (select count(*) from spans), "
          "(select count(*) from llm_calls), (select round(sum(cost_usd), 6) from runs), "
          "(select count(*) from flags), (select count(*) from ingest_files)")


def _counts(home: Path) -> tuple[Any, ...]:
    con = warehouse.connect(home)
    try:
        return con.execute(COUNTS).fetchone()  # type: ignore[return-value]
    finally:
        con.close()


def test_renamed_and_copied_files_are_not_counted_twice(tmp_path: Path) -> None:
    landing = tmp_path / "landing" / "2026-11-20"
    shutil.copytree(DAY, landing)
    home = tmp_path / "home"
    ingest([landing.parent], home)
    before = _counts(home)
    spans = sorted(landing.glob("*.spans.jsonl")) + sorted(landing.glob("*.otlp.jsonl"))
    assert spans, "the samples' day has span files"
    # Renamed: the old names are gone.
    for p in spans:
        p.rename(p.with_name(p.name.replace(".", "-renamed.", 1)))
    report = ingest([landing.parent], home)
    assert _counts(home) == before
    renamed = [f for f in report.files if getattr(f, "renamed_from", None)]
    assert len(renamed) == len(spans)
    con = warehouse.connect(home)
    names = {r[0] for r in con.execute("select source_file from ingest_files").fetchall()}
    con.close()
    assert all("-renamed." in Path(n).name for n in names if "spans" in n or "otlp" in n)
    # A copy beside the original: skipped, and said so.
    first = sorted(landing.glob("*-renamed.*"))[0]
    shutil.copy(first, landing / f"copy-of-{first.name}")
    res = CliRunner().invoke(app, ["ingest", str(landing.parent), "--home", str(home)])
    assert res.exit_code == 0, res.output
    assert f"the same bytes as {first}" in res.output
    assert _counts(home) == before
    # Ingesting again changes nothing, and the copy is still the same data.
    ingest([landing.parent], home)
    assert _counts(home) == before


def test_two_copies_in_one_ingest_are_read_once(tmp_path: Path) -> None:
    landing = tmp_path / "landing"
    landing.mkdir()
    spans = sorted(DAY.glob("*.spans.jsonl"))[0]
    shutil.copy(spans, landing / spans.name)
    shutil.copy(spans, landing / f"again-{spans.name}")
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(spans, alone / spans.name)
    ingest([alone], tmp_path / "one")
    report = ingest([landing], tmp_path / "two")
    assert _counts(tmp_path / "two")[:5] == _counts(tmp_path / "one")[:5]
    assert sum(getattr(f, "same_as", None) is not None for f in report.files) == 1
