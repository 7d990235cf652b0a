"""The derived tables, computed a week at a time: across a month's boundary, with links that
reach far, however the weeks are grouped, and from many small files staged together."""

import json
from pathlib import Path
from typing import Any

import pytest

from tests.transforms.test_lake import run
from transforms import lake as lake_mod
from transforms import warehouse
from transforms.ingest import ingest
from transforms.warehouse import publishing
from transforms.warehouse import weeks as weeks_mod


def _month_boundary_landing(folder: Path, days: list[str], seed: int) -> list[Path]:
    """Runs and their spans on `days`, a fifth of them starting a second before midnight so
    their spans end on the next day (and month), and one run_id on two lines in two months
    (its spans within a day of both: how far a run reaches, see warehouse.NEIGHBOUR_DAYS)."""
    import random
    from datetime import date

    from devtools.synth import default_agents, make_run, make_spans

    rng = random.Random(seed)
    agents = default_agents([date.fromisoformat(d) for d in days])
    folder.mkdir(parents=True, exist_ok=True)
    runs, spans = [], []
    for n, day in enumerate(days):
        for i in range(12):
            line = make_run(rng, agents[i % len(agents)], date.fromisoformat(day), n * 100 + i,
                            case=i)
            if i % 5 == 0:
                line["started_at"] = f"{day}T23:59:59Z"
            runs.append(line)
            spans += make_spans(rng, line)
    if len(days) >= 3:  # a run of the second day that ends the next day, on a later line
        runs.append({**runs[12], "started_at": f"{days[2]}T08:00:00Z"})
    (folder / f"r-{seed}.responses.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in runs))
    (folder / f"s-{seed}.spans.jsonl").write_text("".join(json.dumps(s) + "\n" for s in spans))
    return sorted(folder.iterdir())


def _public_rows(con: Any) -> dict[str, list[str]]:
    views = [r[0] for r in con.execute("SELECT view_name FROM duckdb_views() WHERE "
                                       "schema_name = 'main' AND NOT internal").fetchall()]
    out = {}
    for v in views:
        cols = [r[0] for r in con.execute(f"DESCRIBE {v}").fetchall()]
        # Sums of floats may differ in their last digit with the order of summation.
        sel = ", ".join(f"round({c}, 9)" if t in ("DOUBLE", "FLOAT") else c for c, t in
                        ((r[0], r[1]) for r in con.execute(f"DESCRIBE {v}").fetchall()))
        del cols
        out[v] = sorted(repr(r) for r in con.execute(f"SELECT {sel} FROM {v}").fetchall())
    return out


def _week_files(home: Path, table: str) -> dict[str, set[str]]:
    """The data files of a derived table, by week partition."""
    import pyarrow as pa

    dt = lake_mod.Lake(home).open(table)
    actions = pa.table(dt.get_add_actions(flatten=True))
    out: dict[str, set[str]] = {}
    for path, week in zip(actions.column("path").to_pylist(),
                          actions.column("partition.week").to_pylist(), strict=True):
        out.setdefault(week, set()).add(path)
    return out


def test_derived_a_week_at_a_time_equals_the_whole_lake_computed_at_once(
        tmp_path: Path) -> None:
    """Every public view of the published warehouse (derived week by week, each week from its
    days and two days either side) equals the views computed over the whole lake at once,
    across week and month boundaries that runs and traces cross; a later night rewrites its
    own week and leaves the earlier week's files as they were."""
    home = tmp_path / "home"
    ingest(_month_boundary_landing(tmp_path / "landing", ["2026-10-31", "2026-11-01",
                                                          "2026-11-02"], 1), home)
    first = {t: _week_files(home, t) for t in ("runs", "_derived/int_span_runs")}
    assert sorted(first["runs"]) == ["2026-10-26", "2026-11-02"]
    ingest(_month_boundary_landing(tmp_path / "night", ["2026-11-04"], 2), home)
    assert lake_mod.Lake(home).commit_meta()["weeks_derived"] == 1
    for t, weeks in first.items():
        after = _week_files(home, t)
        assert after["2026-10-26"] == weeks["2026-10-26"], t
        assert after["2026-11-02"].isdisjoint(weeks["2026-11-02"]), t
    pub, whole = warehouse.connect(home), publishing.computed(home)
    try:
        got, want = _public_rows(pub), _public_rows(whole)
    finally:
        pub.close()
        whole.close()
    assert got.keys() == want.keys()
    for v in want:
        assert got[v] == want[v], v
    assert want["runs"] and want["spans"] and any("run_id_duplicate" in r for r in want["flags"])


def _far_links_landing(folder: Path) -> list[Path]:
    """Two weeks and a half of runs with spans, some of them out of a link's reach: spans two
    and four days after their run (across a week's end for some), a trace_id carried by two
    runs two days apart (with spans between them, within a day of both), and a span whose
    parent started two days before it."""
    import random
    from datetime import date, timedelta

    from devtools.synth import default_agents, make_run, make_spans

    rng = random.Random(5)
    days = [date(2026, 10, 25) + timedelta(days=i) for i in range(17)]
    agents = default_agents(days)
    runs, spans = [], []
    day_ns = 86_400 * 10**9
    for n, day in enumerate(days):
        for i in range(6):
            line = make_run(rng, agents[i % len(agents)], day, n * 100 + i, case=i)
            if i == 5:
                line["started_at"] = f"{day}T23:59:59Z"
            its = make_spans(rng, line)
            if i in (1, 4):  # spans two or four days after their run: not counted toward it
                for s in its:
                    s["start_time"] += (2 if i == 1 else 4) * day_ns
                    s["end_time"] += (2 if i == 1 else 4) * day_ns
            if i == 2 and n % 3 == 0:  # a child span whose parent started two days before
                its[0]["start_time"] -= 2 * day_ns
                its[0]["end_time"] -= 2 * day_ns
            runs.append(line)
            spans += its
    # One trace, two runs two days apart; spans on the day between and the day after the second.
    first, second = runs[6 * 8 + 3], runs[6 * 10 + 3]
    second["trace_id"] = first["trace_id"]
    for s in make_spans(rng, first):
        s["start_time"] += day_ns
        s["end_time"] += day_ns
        spans.append(s)
    for s in make_spans(rng, second):
        s["context"]["trace_id"] = first["trace_id"]
        s["start_time"] += day_ns
        s["end_time"] += day_ns
        spans.append(s)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "r.responses.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    (folder / "s.spans.jsonl").write_text("".join(json.dumps(s) + "\n" for s in spans))
    return sorted(folder.iterdir())


def test_derived_rows_do_not_depend_on_how_weeks_are_grouped(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A backfill computes adjacent weeks in one pass, a night its own week alone: links reach
    one day across midnight (the within_reach macro), so every public view is the same either
    way, and equals the whole lake computed at once, with links out of reach in the data."""
    from datetime import UTC, datetime

    landing = _far_links_landing(tmp_path / "landing")
    now = datetime(2026, 11, 12, tzinfo=UTC)
    monkeypatch.setattr(weeks_mod, "GROUP_WEEKS", 1)
    alone = tmp_path / "alone"
    ingest(landing, alone, now=now)
    monkeypatch.setattr(weeks_mod, "GROUP_WEEKS", 8)
    grouped = tmp_path / "grouped"
    ingest(landing, grouped, now=now)
    assert len(_week_files(grouped, "_derived/int_runs")) == 4
    rows = {}
    for name, home in (("alone", alone), ("grouped", grouped)):
        con = warehouse.connect(home)
        try:
            rows[name] = _public_rows(con)
        finally:
            con.close()
    live = publishing.computed(grouped)
    try:
        rows["live"] = _public_rows(live)
        linked = dict(live.execute(
            "SELECT linked_by IS NULL, count(*) FROM spans GROUP BY 1").fetchall())
        near = live.execute("SELECT count(*) FROM intermediate.int_span_runs "
                            "WHERE run_id IS NOT NULL AND near_run_day IS NULL").fetchall()
        orphans = live.execute("SELECT count(*) FROM flags "
                               "WHERE code = 'span_parent_missing'").fetchall()
        far = live.execute("SELECT count(*), count(DISTINCT run_id) FROM flags "
                           "WHERE code = 'span_outside_run_window'").fetchall()
        # The SQL's reach is the one the weeks' margin is made for.
        reach = warehouse.NEIGHBOUR_DAYS
        assert live.execute(f"SELECT within_reach(DATE '2026-11-01' + {reach}, DATE "
                            f"'2026-11-01'), within_reach(DATE '2026-11-01' + {reach + 1}, "
                            "DATE '2026-11-01')").fetchall() == [(True, False)]
    finally:
        live.close()
    for v in rows["live"]:
        assert rows["alone"][v] == rows["live"][v], v
        assert rows["grouped"][v] == rows["live"][v], v
    # Out of reach: spans two days after their run unlinked (or, linked by their run_id
    # attribute, not counted toward it), the ambiguous trace's spans unlinked, and parents two
    # days away reported missing.
    assert linked[True] > 0 and linked[False] > 0
    assert linked[True] + near[0][0] >= 2 * 17 * 3 + 3
    assert orphans[0][0] >= 6
    # The runs whose spans lie two or four days after them are found, and say so (the
    # lake-wide findings, the same whichever way the weeks were computed).
    assert far[0][1] >= 2 * 17


def test_many_small_files_are_staged_together(tmp_path: Path) -> None:
    """A folder of many one-line files is normalized and staged in batches: the lake holds a
    few data files per table, not one per input file, and every file keeps its own counts."""
    from transforms.block_scheduler import BATCH_FILES

    folder = tmp_path / "landing"
    folder.mkdir()
    n = 1200
    for i in range(n):
        (folder / f"f{i:05d}.responses.jsonl").write_text(
            json.dumps(run(f"r{i}", "2026-11-20")) + "\n" + ("not json\n" if i % 100 == 0 else ""))
    home = tmp_path / "home"
    report = ingest([folder], home, workers=1)
    assert len(report.files) == n
    assert sum(f.accepted for f in report.files) == n
    assert [f.quarantined for f in report.files] == [1 if i % 100 == 0 else 0 for i in range(n)]
    files = list((home / "lake" / "_lines" / "runs").glob("month=*/*.parquet"))
    assert 1 <= len(files) <= -(-n // BATCH_FILES)
    con = warehouse.connect(home)
    try:
        assert con.execute("SELECT count(*), count(DISTINCT source_file) FROM runs").fetchall() \
            == [(n, n)]
        assert con.execute("SELECT count(*) FROM quarantine").fetchall() == [(n // 100,)]
    finally:
        con.close()
