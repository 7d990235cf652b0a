"""A `name=value` folder in the warehouse's path is only a folder name: it never becomes a
column value of the lake's rows (DuckDB would read it as a Hive partition)."""

import os
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, SamplesLake
from transforms import warehouse
from transforms.ingest import ingest

SAMPLES = REPO / "data_samples"


def _summary(home: Path, ingested: bool = False) -> dict[str, Any]:
    if not ingested:
        ingest([SAMPLES], home, tools=SAMPLES / "tools.yaml", workers=1)
    con = warehouse.connect(home)
    try:
        q = lambda sql: con.execute(sql).fetchall()  # noqa: E731
        return {
            "runs": q("SELECT run_id, day, source_line FROM runs ORDER BY ALL"),
            "spans": q("SELECT count(*), count(DISTINCT run_id), min(day), max(day) FROM spans"),
            "files": q("SELECT regexp_extract(source_file, 'data_samples/.*'), day, days "
                       "FROM ingest_files ORDER BY 1"),
            "flags": q("SELECT code, count(*) FROM flags GROUP BY 1 ORDER BY 1"),
            "pass_rates": q("SELECT * FROM v_pass_rates ORDER BY ALL"),
        }
    finally:
        con.close()


@pytest.mark.parametrize("folder", ["day=2020-01-01", "run_id=x", "month=1999-01/source_line=7"])
def test_a_home_under_a_name_value_folder(folder: str, tmp_path: Path,
                                          samples_lake: SamplesLake) -> None:
    # The plain home: the session's samples lake (the same ingest, under no name=value folder).
    assert "=" not in str(samples_lake.home)
    plain = _summary(samples_lake.home, ingested=True)
    assert plain["runs"]
    assert _summary(tmp_path / folder / "home") == plain


def test_a_legacy_lake_under_a_name_value_folder_converts(tmp_path: Path) -> None:
    """Converting a lake of an earlier runlake (rows in day=YYYY-MM-DD folders) takes the day
    from the folder holding each file, not from folders above the lake."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from transforms.contracts.schemas import TABLES

    home = tmp_path / "day=2020-01-01" / "run_id=x" / "home"
    lake = home / "lake"
    src = str(tmp_path / "old.responses.jsonl")
    for table, rows in {
        "runs": [{"run_id": "r1", "agent": "a", "status": "passed", "source_file": src,
                  "source_line": 2}],
        "ingest_files": [{"source_file": src, "kind": "responses", "sha256": "x",
                          "bytes": 10, "lines": 2, "lines_accepted": 2,
                          "lines_quarantined": 0, "lines_blank": 0}],
    }.items():
        schema = pa.schema([f for f in TABLES[table].schema if f.name != "day"])
        version = lake / "_versions" / table / "day=2026-11-20.abc"
        version.mkdir(parents=True)
        pq.write_table(pa.Table.from_pylist(rows, schema=schema), version / "part-0.parquet")
        link = lake / table / "day=2026-11-20"
        link.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(os.path.relpath(version, link.parent), link)
    ingest([], home)
    con = warehouse.connect(home)
    try:
        assert con.execute("SELECT run_id, day::VARCHAR FROM runs").fetchall() == [
            ("r1", "2026-11-20")]
        assert con.execute("SELECT day::VARCHAR FROM ingest_files").fetchall() == [
            ("2026-11-20",)]
    finally:
        con.close()
