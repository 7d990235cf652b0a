"""Each analytics view against hand-computed rows: tests/sql/<view>.yaml gives response and
span lines, a query and the rows it must return (floats to 4 decimals); a view's further
cases are tests/sql/<view>.<case>.yaml."""

import json
from pathlib import Path
from typing import Any

import duckdb
import pytest
import yaml

from tests import memory_lake
from tests.conftest import SAMPLES
from transforms import warehouse
from transforms.ingest import ingest

CASES = sorted([*Path(__file__).parent.glob("v_*.yaml"), Path(__file__).parent / "sessions.yaml"])


def _materialize(value: Any) -> Any:
    if value == "@long":
        return "x" * 50_001
    if isinstance(value, dict):
        return {k: _materialize(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_materialize(v) for v in value]
    return value


def _close(got: Any, want: Any) -> bool:
    if isinstance(want, float) and isinstance(got, int | float):
        return abs(got - want) < 1e-4
    if isinstance(want, list) and isinstance(got, list | tuple):
        return len(got) == len(want) and all(_close(g, w) for g, w in zip(got, want, strict=True))
    return bool(got == want)


def _landing(case: Path, tmp_path: Path) -> tuple[dict[str, Any], Path]:
    """The case's spec, and a landing folder holding its given lines (one file per kind)."""
    spec = yaml.safe_load(case.read_text())
    landing = tmp_path / "landing"
    landing.mkdir()
    for kind, lines in spec["given"].items():
        (landing / f"given.{kind}.jsonl").write_text(
            "".join(json.dumps(_materialize(line)) + "\n" for line in lines))
    return spec, landing


def _rows(con: duckdb.DuckDBPyConnection, sql: str) -> list[list[Any]]:
    try:
        return [list(r) for r in con.execute(sql).fetchall()]
    finally:
        con.close()


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_view_returns_expected_rows(case: Path, tmp_path: Path) -> None:
    """The view's rows are exactly the expected ones: the given lines read by the ingest's
    per-line code, every view built over them in memory (tests/memory_lake.py)."""
    spec, landing = _landing(case, tmp_path)
    rows = _rows(memory_lake.connect([landing]), spec["query"])
    assert _close(rows, spec["expect"]), rows


THROUGH_INGEST = ("v_runs", "v_token_usage", "v_runs.price_periods", "v_flag_summary",
                  "v_regressions")
"""Cases also run through the real ingest (Delta commit, warehouse file): responses and spans,
later lines superseding earlier ones, prices, flags from several tables, the regression
statistics."""


@pytest.mark.parametrize("name", THROUGH_INGEST)
def test_ingest_and_memory_give_the_same_rows(name: str, tmp_path: Path) -> None:
    """A real ingest of the case gives its expected rows, and the very rows of the in-memory
    build, column for column."""
    spec, landing = _landing(Path(__file__).parent / f"{name}.yaml", tmp_path)
    ingest([landing], tmp_path / "home")
    ingested = _rows(warehouse.connect(tmp_path / "home"), spec["query"])
    assert _close(ingested, spec["expect"]), ingested
    assert ingested == _rows(memory_lake.connect([landing]), spec["query"])


def test_every_public_view_has_a_case() -> None:
    """Each v_* view of sql/marts has its given/expect file."""
    views = {p.stem for p in (warehouse.SQL_DIR / "marts").glob("v_*.sql")} | {"sessions"}
    assert views == {c.stem.split(".")[0] for c in CASES}


SPEC_COLUMNS = {
    "v_pass_rates": "day agent model n_runs n_graded n_passed n_failed n_contract_violations "
                    "n_errors n_skipped n_ungraded pass_rate pass_rate_low pass_rate_high",
    "v_token_usage": "day agent model n_runs input_tokens output_tokens total_tokens "
                     "tokens_per_run_avg tokens_per_run_p50 tokens_per_run_p95 price "
                     "cost_usd_total cost_usd_per_run",
    "v_runtime": "day agent model n_runs agent_runtime_ms_avg agent_runtime_ms_p50 "
                 "agent_runtime_ms_p90 agent_runtime_ms_p95 agent_runtime_ms_p99 "
                 "agent_runtime_ms_max llm_latency_ms_p50 llm_latency_ms_p95",
    "v_tool_frequency": "day agent model tool_name n_calls n_runs_using calls_per_run "
                        "call_share n_invalid_arguments n_unanswered n_orphan_results",
    "v_flag_summary": "day agent model code severity category n_findings n_runs_affected "
                      "rate_per_run",
    "v_truncations": "entity run_id span_id day agent model code",
    "v_contract_violations": "run_id day agent model code detail",
    "v_regressions": "agent model latest_day baseline_start baseline_end baseline_n_graded "
                     "baseline_pass_rate latest_n_graded latest_pass_rate pass_rate_delta "
                     "p_value is_significant tokens_per_run_pct_change "
                     "agent_runtime_ms_p95_pct_change new_flag_codes runs_baseline runs_latest "
                     "error_rate_baseline error_rate_latest error_p_value is_error_regression "
                     "is_missing regressed reasons",
    "v_missing_test_cases": "agent model test_case_id baseline_runs last_seen_day",
    "v_test_case_flips": "agent model test_case_id direction baseline_status latest_status "
                         "latest_day",
}
"""The columns each view promises its users (docs/data-dictionary.md), in order."""


def test_views_have_their_documented_columns(tmp_path: Path) -> None:
    """Every documented column is there, in its order, on an empty warehouse too;
    v_runs has every runs column plus n_flags and n_error_flags."""
    warehouse.build(tmp_path)
    con = warehouse.connect(tmp_path)
    try:
        cols = {v: [r[0] for r in con.execute(f"DESCRIBE {v}").fetchall()]
                for v in [*SPEC_COLUMNS, "v_runs", "runs"]}
    finally:
        con.close()
    for view, names in SPEC_COLUMNS.items():
        wanted = names.split()
        assert [c for c in cols[view] if c in wanted] == wanted, view
    assert cols["v_runs"] == [*cols["runs"], "n_flags", "n_error_flags"]


def test_memory_build_names_a_table_it_does_not_know() -> None:
    """The in-memory build takes lake tables only: another name is a clear error, not an
    empty view."""
    import pyarrow as pa

    from transforms.warehouse import memory

    with pytest.raises(ValueError, match="not lake tables: run"):
        memory.connect({"run": pa.table({"run_id": ["a"]})})


def test_memory_build_without_rows_has_every_view_empty() -> None:
    """With no rows the in-memory build has the views of a published warehouse, each empty."""
    from transforms.warehouse import memory

    con = memory.connect({})
    try:
        for view in [*SPEC_COLUMNS, "v_runs", "runs", "flags", "ingest_files"]:
            assert con.execute(f"SELECT count(*) FROM {view}").fetchone() == (0,), view
    finally:
        con.close()


ROW_BY_ROW_JOINS = {
    "regexp_full_match(s, alias)":
        "canonical_model(): a model name against each alias pattern (a few dozen)",
    "((agent = '*') OR (agent = agent))":
        "int_tool_usage: an agent's tools against the registry's entries for it or for every agent",
    "day >= baseline_start AND day <= latest_day":
        "the report's views: each day against the one row of the days compared",
}
"""The joins DuckDB may run by comparing every row with every row of the other side, with the
small side that makes each cheap."""


def _plan_nodes(node: dict[str, Any]) -> Any:
    yield node
    for child in node.get("children", []):
        yield from _plan_nodes(child)


def test_every_query_of_an_ingest_joins_large_relations_by_hashing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every query an ingest runs (staging, the summary, the derived tables, the warehouse
    file) and every view of the warehouse it publishes joins by equalities, so DuckDB
    hashes: a join condition with an OR, or an IS NULL of one side, is run as a nested loop,
    comparing every row with every row. One such join (span rows to their run) made a night
    of spans take minutes, and two more (flags to their run, prices to their day) seconds
    (bench/RESULTS.md). The joins listed in ROW_BY_ROW_JOINS have a small side."""
    from transforms import db

    plans: list[tuple[str, dict[str, Any]]] = []
    connect = db.connect

    class Explained:
        def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
            self._con = con

        def execute(self, sql: str, *args: Any, **kwargs: Any) -> Any:
            query = sql.strip()
            if query.upper().startswith("COPY ("):
                query = query[len("COPY ("):query.rindex(") TO ")]
            elif query.upper().startswith("CREATE TABLE") and " AS " in query.upper():
                query = query[query.upper().index(" AS ") + 4:]
            if query.upper().startswith(("SELECT", "WITH", "(SELECT")):
                for row in self._con.execute(f"EXPLAIN (FORMAT json) {query}", *args,
                                             **kwargs).fetchall():
                    plans.append((sql, json.loads(row[1])))
            return self._con.execute(sql, *args, **kwargs)

        def __getattr__(self, name: str) -> Any:
            return getattr(self._con, name)

    monkeypatch.setattr(db, "connect", lambda *a, **k: Explained(connect(*a, **k)))
    home = tmp_path / "home"
    days = sorted(SAMPLES.glob("2026-*"))
    ingest(days[:3], home, workers=1)  # then a later night: the derive of a lake's new weeks
    ingest(days, home, workers=1)
    monkeypatch.setattr(db, "connect", connect)
    con = warehouse.connect(home)
    try:
        for (view,) in con.execute("SELECT view_name FROM duckdb_views() "
                                   "WHERE NOT internal AND schema_name = 'main'").fetchall():
            for row in con.execute(f"EXPLAIN (FORMAT json) SELECT * FROM {view}").fetchall():
                plans.append((view, json.loads(row[1])))
    finally:
        con.close()
    assert len(plans) > 100
    looped: dict[str, set[str]] = {}
    allowed: set[str] = set()
    for sql, plan in plans:
        for root in plan:
            for node in _plan_nodes(root):
                if node.get("name") in ("NESTED_LOOP_JOIN", "BLOCKWISE_NL_JOIN"):
                    info = node.get("extra_info", {})
                    found = info.get("Conditions") or info.get("Condition")
                    found = " AND ".join(found) if isinstance(found, list) else str(found)
                    if found in ROW_BY_ROW_JOINS:
                        allowed.add(found)
                    else:
                        looped.setdefault(found, set()).add(" ".join(sql.split())[:200])
    assert not looped, looped
    assert allowed == set(ROW_BY_ROW_JOINS)  # each allowed join is still there to allow
