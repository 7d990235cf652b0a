"""The SQL views agree with an independent polars roll-up of the lake tables' rows, on
generated runs: v_pass_rates, v_token_usage and v_tool_frequency.

The generated examples run in memory (tests/memory_lake.py: the ingest's per-line code, every
view built over its rows, no Delta commit); one fixed set of runs goes through the real ingest,
rolled up from the Delta tables as a polars user reads them."""

import json
import math
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import polars as pl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import memory_lake
from tests.property import examples
from transforms import warehouse
from transforms.contracts.schemas import TABLES
from transforms.ingest import ingest
from transforms.lake import lines_path
from transforms.warehouse import memory

STATUSES = ["passed", "failed", "error", "skipped", None]
TOOLS = ["search", "fetch", "refund"]

run_strategy = st.fixed_dictionaries({
    "agent": st.sampled_from(["a", "b"]),
    "model": st.sampled_from(["m1", "m2"]),
    "day": st.integers(0, 2),
    "status": st.sampled_from(STATUSES),
    "strict_violation": st.booleans(),
    "input_tokens": st.one_of(st.none(), st.integers(0, 5000)),
    "output_tokens": st.one_of(st.none(), st.integers(0, 500)),
    "calls": st.lists(st.tuples(st.sampled_from(TOOLS), st.booleans(), st.booleans()),
                      max_size=4),
})


def _line(i: int, r: dict[str, Any]) -> dict[str, Any]:
    msgs: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for k, (tool, valid, answered) in enumerate(r["calls"]):
        msgs.append({"role": "assistant", "tool_calls": [
            {"id": f"c{k}", "name": tool, "arguments": "{}" if valid else "{bad"}]})
        if answered:
            msgs.append({"role": "tool", "tool_call_id": f"c{k}", "content": "ok"})
    if not r["strict_violation"]:
        msgs.append({"role": "assistant", "content": "done"})
    metadata = {"model": r["model"]}
    for key in ("input_tokens", "output_tokens"):
        if r[key] is not None:
            metadata[f"total_{key}"] = r[key]
    line: dict[str, Any] = {
        "run_id": f"r{i}", "agent": r["agent"],
        "started_at": (date(2026, 11, 18) + timedelta(days=r["day"])).isoformat() + "T10:00:00Z",
        "response_contract": {"response_mode": "rich", "strictness": "strict"},
        "response": {"final_response": "done", "messages": msgs, "metadata": metadata}}
    if r["status"] is not None:
        line["outcome"] = {"status": r["status"]}
    return line


def _lake(home: Path, table: str) -> pl.DataFrame:
    """A lake table as a polars user reads it: the Delta table, without its partition column."""
    if not (home / "lake" / table / "_delta_log").is_dir():
        return pl.DataFrame(TABLES[table].schema.empty_table())
    return pl.read_delta(str(home / "lake" / lines_path(table))).drop("month")


def _memory(tables: dict[str, Any], table: str) -> pl.DataFrame:
    """A lake table's rows as the ingest's workers give them (no partition column)."""
    got = tables.get(table)
    return pl.DataFrame(got if got is not None else TABLES[table].schema.empty_table())


def _rows(con: Any, sql: str) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in con.execute(sql).fetchall()]


def _write(root: Path, runs: list[dict[str, Any]]) -> Path:
    path = root / "in" / "r.responses.jsonl"
    path.parent.mkdir()
    path.write_text("".join(json.dumps(_line(i, r)) + "\n" for i, r in enumerate(runs)))
    return path


def _same(a: list[tuple[Any, ...]], b: list[tuple[Any, ...]]) -> bool:
    def eq(x: Any, y: Any) -> bool:
        if isinstance(x, float) or isinstance(y, float):
            return (x is None and y is None) or (
                x is not None and y is not None and math.isclose(x, y, rel_tol=1e-9))
        return bool(x == y)
    return len(a) == len(b) and all(
        len(r) == len(s) and all(eq(x, y) for x, y in zip(r, s, strict=True))
        for r, s in zip(a, b, strict=True))


@settings(max_examples=examples(15), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(runs=st.lists(run_strategy, min_size=1, max_size=25))
def test_views_match_a_polars_rollup(tmp_path_factory: Any, runs: list[dict[str, Any]]) -> None:
    """In memory: the views over the rows the ingest's per-line code gives, against polars
    over the same rows."""
    tables, _ = memory_lake.lake_tables([_write(tmp_path_factory.mktemp("rollup"), runs)])
    con = memory.connect(tables)
    try:
        _agree(_memory(tables, "runs"), _memory(tables, "tool_calls"), con)
    finally:
        con.close()


FIXED = [{"agent": "ab"[i % 2], "model": ["m1", "m2"][i // 2 % 2], "day": i % 3,
          "status": STATUSES[i % 5], "strict_violation": i % 4 == 3,
          "input_tokens": None if i % 6 == 5 else 100 * i,
          "output_tokens": None if i % 7 == 6 else 10 * i,
          "calls": [(TOOLS[(i + k) % 3], (i + k) % 3 != 1, (i + k) % 4 != 2)
                    for k in range(i % 5)]} for i in range(24)]
"""24 runs: every status on each agent and model, some without tokens, up to four calls each,
invalid arguments and unanswered calls among them."""


def test_views_match_a_polars_rollup_of_the_lake(tmp_path: Path) -> None:
    """Through the real ingest: the views against polars over the Delta tables."""
    home = tmp_path / "home"
    ingest([_write(tmp_path, FIXED)], home)
    con = warehouse.connect(home)
    try:
        _agree(_lake(home, "runs"), _lake(home, "tool_calls"), con)
    finally:
        con.close()


def _agree(lake_runs: pl.DataFrame, lake_calls: pl.DataFrame, con: Any) -> None:
    keys = ["day", "agent", "model"]

    graded = pl.col("status").is_in(["passed", "failed", "contract_violation"])
    pass_rates = (lake_runs.group_by(keys).agg(
        pl.len().alias("n_runs"), graded.sum().alias("n_graded"),
        (pl.col("status") == "passed").sum().alias("n_passed"),
        (pl.col("status") == "ungraded").sum().alias("n_ungraded"))
        .with_columns((pl.col("n_passed") / pl.col("n_graded")).alias("pass_rate"))
        .with_columns(pl.when(pl.col("n_graded") > 0).then(pl.col("pass_rate")))
        .sort(keys))
    assert _same(
        [tuple(r) for r in pass_rates.rows()],
        _rows(con, "SELECT day, agent, model, n_runs, n_graded, n_passed, n_ungraded, "
                   "pass_rate FROM v_pass_rates ORDER BY day, agent, model"))

    run_tokens = (pl.when(pl.col("input_tokens").is_not_null()
                          | pl.col("output_tokens").is_not_null())
                  .then(pl.col("input_tokens").fill_null(0) + pl.col("output_tokens").fill_null(0)))
    tokens = (lake_runs.with_columns(run_tokens.alias("t")).group_by(keys).agg(
        pl.len().alias("n_runs"), pl.col("input_tokens").sum().alias("i"),
        pl.col("output_tokens").sum().alias("o"), pl.col("t").sum().alias("total"),
        pl.col("t").mean().alias("avg"),
        pl.col("t").quantile(0.95, interpolation="linear").alias("p95")).sort(keys))
    view = _rows(con, "SELECT day, agent, model, n_runs, coalesce(input_tokens, 0), "
                      "coalesce(output_tokens, 0), coalesce(total_tokens, 0), "
                      "tokens_per_run_avg, tokens_per_run_p95 FROM v_token_usage "
                      "ORDER BY day, agent, model")
    assert _same([tuple(r) for r in tokens.rows()], view)

    calls = lake_calls.join(lake_runs.select("run_id", *keys), on="run_id", suffix="_run")
    per_group = lake_runs.group_by(keys).agg(pl.len().alias("group_runs"))
    freq = (calls.group_by([*keys, "tool_name"]).agg(
        pl.len().alias("n_calls"), pl.col("run_id").n_unique().alias("n_runs_using"),
        (~pl.col("arguments_valid")).sum().alias("n_invalid"),
        pl.col("result_message_index").is_null().sum().alias("n_unanswered"))
        .join(per_group, on=keys)
        .with_columns((pl.col("n_calls") / pl.col("group_runs")).alias("calls_per_run"),
                      (pl.col("n_calls") / pl.col("n_calls").sum().over(keys)).alias("share"))
        .select(*keys, "tool_name", "n_calls", "n_runs_using", "calls_per_run", "share",
                "n_invalid", "n_unanswered")
        .sort([*keys, "tool_name"]))
    assert _same(
        [tuple(r) for r in freq.rows()],
        _rows(con, "SELECT day, agent, model, tool_name, n_calls, n_runs_using, calls_per_run, "
                   "call_share, n_invalid_arguments, n_unanswered FROM v_tool_frequency "
                    "ORDER BY day, agent, model, tool_name"))
