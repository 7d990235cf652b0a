"""Each analytics view against hand-computed rows: tests/sql/<view>.yaml gives response and
span lines, a query and the rows it must return (floats to 4 decimals); a view's further
cases are tests/sql/<view>.<case>.yaml."""

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

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


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_view_returns_expected_rows(case: Path, tmp_path: Path) -> None:
    """The view's rows are exactly the expected ones."""
    spec = yaml.safe_load(case.read_text())
    landing = tmp_path / "landing"
    landing.mkdir()
    for kind, lines in spec["given"].items():
        (landing / f"given.{kind}.jsonl").write_text(
            "".join(json.dumps(_materialize(line)) + "\n" for line in lines))
    ingest([landing], tmp_path / "home")
    con = warehouse.connect(tmp_path / "home")
    rows = con.execute(spec["query"]).fetchall()
    con.close()
    assert _close([list(r) for r in rows], spec["expect"]), rows


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
