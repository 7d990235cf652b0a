"""Views benchmark: every public view over a generated lake of N runs.

    python bench/views.py --runs 1000000 [--repeat 3]

Writes bench/out/views-<N>/lake (reused when present) straight with DuckDB: N runs over 7
days, 15 messages and 3 tool calls per run, a root span and an LLM call per run, findings on
~6% of runs; then computes the derived tables as a commit does (timed), builds
warehouse.duckdb and times `SELECT *` of each view, fetched whole as Arrow (median of the
repeats), plus opening the warehouse.
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from transforms import db, warehouse  # noqa: E402
from transforms.contracts.schemas import TABLES  # noqa: E402
from transforms.lake import MANIFEST, duckdb_type, lake_schema  # noqa: E402

VIEWS = ["runs", "v_runs", "v_pass_rates", "v_token_usage", "v_runtime", "v_tool_frequency",
         "v_flag_summary", "v_truncations", "v_contract_violations", "v_regressions",
         "v_test_case_flips", "v_flaky_cases", "v_tool_share_changes"]

# Column expressions per table over a generator `g(i)`; columns not named are typed nulls.
RUNS = {
    "run_id": "'r' || i", "day": "DATE '2026-11-14' + (i % 7)::INT",
    "agent": "'agent-' || (i % 8)", "model": "['gpt-4o', 'claude-sonnet-4-5', "
    "'gemini-2.5-flash'][1 + (i % 3)::INT]", "test_case_id": "'case-' || (i % 500)",
    "batch_id": "(DATE '2026-11-14' + (i % 7)::INT)::VARCHAR",
    "status": "CASE WHEN h < 70 THEN 'passed' WHEN h < 90 THEN 'failed' WHEN h < 93 THEN "
              "'contract_violation' WHEN h < 96 THEN 'error' WHEN h < 98 THEN 'skipped' "
              "ELSE 'ungraded' END",
    "contract_mode": "'lenient'", "trace_mode": "'rich'", "final_response": "'Refund issued.'",
    "final_response_chars": "14", "final_response_truncated": "false", "n_messages": "15",
    "n_tool_calls": "3", "n_thinking": "0", "input_tokens": "1000 + (hash(i) % 9000)::BIGINT",
    "output_tokens": "50 + (hash(i + 1) % 900)::BIGINT",
    "agent_runtime_ms": "(1000 + hash(i + 2) % 30000)::DOUBLE", "tokens_source": "'metadata'",
    "record_shape": "'envelope'", "source_file": "'bench.responses.jsonl'", "source_line": "i",
    "trace_id": "'t' || i",
}
MESSAGES = {
    "run_id": "'r' || (i // 15)", "day": "DATE '2026-11-14' + ((i // 15) % 7)::INT",
    "message_index": "i % 15", "role": "['system', 'user', 'assistant', 'tool'][1 + "
    "(i % 4)::INT]", "content_kind": "'string'",
    "text": "'Please look up order ' || i || ' and tell me when it ships.'",
    "chars": "45", "n_tool_calls": "0", "n_thinking": "0", "source": "'response'",
    "name": "CASE WHEN i % 4 = 3 THEN 'search' END",
    "source_file": "'bench.responses.jsonl'", "source_line": "i // 15",
}
TOOL_CALLS = {
    "run_id": "'r' || (i // 3)", "day": "DATE '2026-11-14' + ((i // 3) % 7)::INT",
    "message_index": "2 + 4 * (i % 3)", "call_index": "0", "call_id": "'c' || i",
    "tool_name": "['search', 'get_order', 'refund', 'escalate', 'lookup', 'fetch', 'book', "
                 "'cancel'][1 + (hash(i) % 8)::INT]", "arguments": "'{\"id\":1}'",
    "arguments_valid": "hash(i) % 100 <> 0", "arguments_chars": "8", "call_shape": "'flat'",
    "result_message_index": "CASE WHEN hash(i + 3) % 50 <> 0 THEN 3 + 4 * (i % 3) END",
    "result_chars": "20", "source": "'response'", "source_file": "'bench.responses.jsonl'",
    "source_line": "i // 3",
}
FLAGS = {
    "entity": "'run'", "run_id": "'r' || (i * 16)",
    "day": "DATE '2026-11-14' + ((i * 16) % 7)::INT",
    "code": "['tool_call_unanswered', 'final_response_truncated', 'response_contract_violation',"
            " 'metadata_malformed'][1 + (i % 4)::INT]",
    "severity": "['info', 'warning', 'error', 'warning'][1 + (i % 4)::INT]",
    "category": "['integrity', 'truncation', 'contract', 'contract'][1 + (i % 4)::INT]",
    "detail": "'generated'", "source": "'response'",
    "finding_key": "CASE WHEN i % 4 = 0 THEN 'tool_call:c' || i || ':0' END",
    "source_file": "'bench.responses.jsonl'", "source_line": "i * 16",
}
SPANS = {
    "trace_id": "'t' || (i // 2)", "span_id": "'s' || i",
    "parent_id": "CASE WHEN i % 2 = 1 THEN 's' || (i - 1) END",
    "day": "DATE '2026-11-14' + ((i // 2) % 7)::INT", "agent": "'agent-' || ((i // 2) % 8)",
    "name": "CASE WHEN i % 2 = 0 THEN 'agent.run' ELSE 'llm.chat' END", "kind": "'INTERNAL'",
    "duration_ms": "(1000 + hash(i // 2 + 2) % 30000)::DOUBLE", "status_code": "'OK'",
    "attributes": "'{}'", "resource_attributes": "'{}'", "n_events": "0",
    "has_log_request": "i % 2 = 1", "span_index": "0", "source_file": "'bench.spans.jsonl'",
    "source_line": "i",
}
LLM_CALLS = {
    "span_id": "'s' || (2 * i + 1)", "trace_id": "'t' || i", "day": "DATE '2026-11-14' + "
    "(i % 7)::INT", "agent": "'agent-' || (i % 8)", "provider": "'openai'",
    "model": "['gpt-4o', 'claude-sonnet-4-5', 'gemini-2.5-flash'][1 + (i % 3)::INT]",
    "input_tokens": "1000 + (hash(i) % 9000)::BIGINT",
    "output_tokens": "50 + (hash(i + 1) % 900)::BIGINT", "price": "0.002", "status": "'SUCCESS'",
    "latency_ms": "(200 + hash(i) % 3000)::DOUBLE", "max_tokens": "4096",
    "n_input_messages": "10", "n_output_messages": "1", "source_file": "'bench.spans.jsonl'",
    "source_line": "2 * i + 1",
}
TABLE_ROWS = {"runs": (RUNS, 1), "messages": (MESSAGES, 15), "tool_calls": (TOOL_CALLS, 3),
              "flags": (FLAGS, 1 / 16), "spans": (SPANS, 2), "llm_calls": (LLM_CALLS, 1)}


def build_lake(home: Path, n_runs: int) -> None:
    """The lake as Delta tables (month partitions), with a manifest commit naming their
    versions, as an ingest leaves it."""
    import json

    from deltalake import CommitProperties, write_deltalake

    lake = home / "lake"
    if (lake / MANIFEST / "_delta_log").exists():
        return
    lake.mkdir(parents=True)
    con = db.connect()
    for table, (exprs, per_run) in TABLE_ROWS.items():
        cols = ", ".join(f"({exprs.get(c.name, 'NULL')})::{duckdb_type(c.type)} AS {c.name}"
                         for c in TABLES[table].columns)
        cols += ", strftime(day, '%Y-%m') AS month"
        n = int(n_runs * per_run)
        t = time.perf_counter()
        rows = con.sql(f"SELECT {cols} FROM (SELECT i, hash(i) % 100 AS h FROM range({n}) "
                           "g(i))").to_arrow_table()
        write_deltalake(str(lake / table), rows.cast(lake_schema(table)),
                        partition_by=["month"])
        print(f"wrote {table}: {n:,} rows in {time.perf_counter() - t:.1f} s", flush=True)
    con.close()
    # The manifest last, naming the versions of the tables written above.
    meta = {"tables": {t: (0 if t in TABLE_ROWS else -1) for t in TABLES if t != MANIFEST}}
    write_deltalake(str(lake / MANIFEST), lake_schema(MANIFEST).empty_table(),
                    commit_properties=CommitProperties(
                        custom_metadata={"runlake": json.dumps(meta)}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    home = ROOT / "bench" / "out" / f"views-{args.runs}"
    build_lake(home, args.runs)
    t = time.perf_counter()
    warehouse.publish(home)
    print(f"derived tables and warehouse.duckdb published in {time.perf_counter() - t:.2f} s")
    times = []
    for _ in range(args.repeat):
        t = time.perf_counter()
        warehouse.connect(home).close()
        times.append(time.perf_counter() - t)
    print(f"{'open warehouse (read-only)':<28} {statistics.median(times):7.3f} s")
    print(f"{'view':<28} {'rows':>10} {'seconds':>8}")
    for view in VIEWS:
        times, rows = [], 0
        for _ in range(args.repeat):
            con = warehouse.connect(home)
            t = time.perf_counter()
            rows = con.sql(f"SELECT * FROM {view}").to_arrow_table().num_rows
            times.append(time.perf_counter() - t)
            con.close()
        print(f"{view:<28} {rows:>10,} {statistics.median(times):8.3f}", flush=True)


if __name__ == "__main__":
    main()
