"""The nightly report at scale: `runlake report` over a week and a night of many agents and models.

    python bench/report.py [--runs-per-night 7470] [--pairs 56] [--days 8] [--repeat 3]
                           [--no-spans]

Generates once, under bench/out/report-<N>r-<P>p-<D>d-v<VERSION>/landing/ (reused when
present), a landing folder of D nightly days of response JSONL (one file per day and agent)
and, as the samples have them, the runs' spans beside them (span JSONL, OTLP/JSON for
research-agent; --no-spans leaves them out): P agent x model pairs (8 agents x 7 models by
default), about N runs a night. Each pair runs the same test cases every night, every
fourth case three times (a harness doing repeated trials); a case is easy, hard or flaky for
its pair, so its outcome is mostly the same night after night, with ~1% errors and ~1%
skipped runs. On the last night one pair's pass rate drops (its easy
cases pass half the time), another pair crashes on ~35% of its runs (the transcript stops
after the user's message, no final response), and a third pair does not run two of its test
cases. Transcripts, tool calls, tokens and metadata come from devtools/synth.py, as the samples
and the other benches.

Ingests it once (`runlake ingest`, into home/ beside the landing folder), then, --repeat times
and interleaved, after one unmeasured run of the CLI:
- `runlake report --home HOME` in a fresh process, as a user runs it: wall time and the peak
  RSS of the process, sampled every 50 ms (bench/ingest.py's `measure`);
- `transforms.report.write_report(HOME)` in a fresh process under cProfile: the DuckDB queries
  it issues and the seconds spent in them, its total seconds and the process's peak RSS. duckdb
  2.0's connection methods are nanobind methods, which cProfile does not see (no C-call event
  for them), so the child first wraps each query and fetch method of DuckDBPyConnection in a
  Python function of the same name; the stats of those functions are the queries (the query
  methods' calls) and the time in them (query and fetch methods), and their callers say where
  each query comes from.
Last, the floor: each view the report reads, `SELECT *` fetched as Arrow on one read-only
connection, and the transcripts of the flips the page shows read with one query per table.
Medians of --repeat; the load average is printed with each phase.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.ingest import ENV, measure  # noqa: E402
from bench.report_landing import OTLP_AGENT, landing, shape  # noqa: E402

# The views the report reads, as the views publish them for the latest day and 7 days before
# (the report reads the table macros behind them with the same window).
VIEWS = ["v_regressions", "v_missing_test_cases", "v_test_case_flips", "v_flaky_cases",
         "v_pass_rates", "v_token_usage", "v_runtime", "v_tool_share_changes",
         "v_flag_summary"]


def _runlake(*args: str) -> list[str]:
    return [str(Path(sys.executable).parent / "runlake"), *args]


CHILD_ENV = {k: v for k, v in ENV.items() if not k.startswith("RUNLAKE_")}
"""Bytecode caching on (bench/ingest.py), and no RUNLAKE_ setting of the shell (a webhook URL
would be called, another home read)."""


def home_of(folder: Path) -> tuple[Path, str]:
    """The home the landing folder was ingested into once, and what that ingest took. A home
    without its mark (an interrupted ingest) is ingested again."""
    home = folder.parent / "home"
    mark = folder.parent / "ingested.json"
    if mark.exists():
        done = json.loads(mark.read_text())
        return home, (f"cached (it took {done['seconds']:.1f} s, peak {done['peak_mb']:,.0f} "
                      "MB)")
    shutil.rmtree(home, ignore_errors=True)
    secs, peak = measure(_runlake("ingest", str(folder), "--home", str(home)))
    mark.write_text(json.dumps({"seconds": secs, "peak_mb": peak}) + "\n")
    return home, f"{secs:.1f} s, peak {peak:,.0f} MB"


QUERY_METHODS = ("execute", "executemany", "sql", "query", "from_query")
"""DuckDBPyConnection methods that run a query: one call is one query."""
FETCH_METHODS = ("fetchall", "fetchone", "fetchmany", "fetchdf", "fetch_df", "fetch_df_chunk",
                 "df", "fetchnumpy", "to_arrow_table", "to_arrow_reader", "pl", "arrow")
"""DuckDBPyConnection methods that fetch the rows of the last query (those duckdb has)."""


def profile_child(home: str) -> None:
    """Run write_report(home) under cProfile and print its figures as one JSON line. Each
    query and fetch method of DuckDBPyConnection is wrapped first in a Python function of its
    own name (a code object each, so cProfile keeps them apart)."""
    import cProfile
    import pstats
    import resource

    import duckdb

    from transforms.report import write_report

    cls = duckdb.DuckDBPyConnection

    def wrap(name: str) -> None:
        orig = getattr(cls, name)

        def method(self: Any, *args: Any, **kwargs: Any) -> Any:
            return orig(self, *args, **kwargs)

        method.__code__ = method.__code__.replace(co_name=name, co_qualname=f"duckdb.{name}")
        setattr(cls, name, method)

    wrapped = [n for n in (*QUERY_METHODS, *FETCH_METHODS) if hasattr(cls, n)]
    for name in wrapped:
        wrap(name)
    prof = cProfile.Profile()
    start = time.perf_counter()
    prof.enable()
    write_report(home)
    prof.disable()
    total = time.perf_counter() - start
    stats = pstats.Stats(prof).stats  # type: ignore[attr-defined]
    here = Path(__file__).resolve()
    methods: dict[str, tuple[int, float]] = {}
    callers: dict[str, list[float]] = {}
    for (file, _, func), (_, nc, _, ct, by) in stats.items():
        if Path(file).resolve() != here or func not in wrapped:
            continue
        methods[func] = (nc, ct)
        if func not in QUERY_METHODS:
            continue
        for caller, (_, c_nc, _, c_ct) in by.items():
            # A caller that issues exactly one query per call (verdict.reading.rows) is named with
            # its own callers, which say what the queries are for.
            c_stats = stats[caller]
            if c_stats[1] == c_nc and c_stats[4]:
                for up, (_, u_nc, _, u_ct) in c_stats[4].items():
                    key = f"{_where(caller)} <- {_where(up)}"
                    callers.setdefault(key, [0, 0.0])
                    callers[key][0] += u_nc
                    callers[key][1] += u_ct
            else:
                key = _where(caller)
                callers.setdefault(key, [0, 0.0])
                callers[key][0] += c_nc
                callers[key][1] += c_ct
    print(json.dumps({
        "total_s": total,
        "queries": sum(nc for n, (nc, _) in methods.items() if n in QUERY_METHODS),
        "query_s": sum(ct for n, (_, ct) in methods.items() if n in QUERY_METHODS),
        "fetch_s": sum(ct for n, (_, ct) in methods.items() if n not in QUERY_METHODS),
        "methods": methods, "callers": callers,
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


def _where(key: tuple[str, int, str]) -> str:
    file, line, func = key
    path = Path(file)
    if path.is_absolute() and path.is_relative_to(ROOT):
        path = path.relative_to(ROOT)
    return f"{path}:{line} {func}"


def profiled(home: Path) -> dict[str, Any]:
    proc = subprocess.run([sys.executable, __file__, "--profile-child", str(home)],
                          capture_output=True, text=True, env=CHILD_ENV, cwd=ROOT)
    if proc.returncode != 0:
        raise SystemExit(f"write_report under cProfile failed:\n{proc.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def floor(home: Path, repeat: int) -> None:
    """Each view the report reads, `SELECT *` fetched as Arrow, and the transcripts of the
    flips the page shows (one query per table), on one read-only connection."""
    from transforms import warehouse
    from transforms.report import MAX_FLIPS

    def timed(sql: str, params: list[Any] | None = None) -> tuple[float, int]:
        times, rows = [], 0
        for _ in range(repeat):
            t = time.perf_counter()
            rows = con.sql(sql, params=params).to_arrow_table().num_rows
            times.append(time.perf_counter() - t)
        return statistics.median(times), rows

    opens = []
    for _ in range(repeat):
        t = time.perf_counter()
        warehouse.connect(home).close()
        opens.append(time.perf_counter() - t)
    con = warehouse.connect(home)
    try:
        print(f"  {'open the warehouse (read-only)':<44} {'':>9} {statistics.median(opens):8.3f}")
        total = 0.0
        for view in VIEWS:
            secs, rows = timed(f"SELECT * FROM {view}")  # noqa: S608 (names from VIEWS)
            total += secs
            print(f"  {'SELECT * FROM ' + view:<44} {rows:>9,} {secs:8.3f}", flush=True)
        print(f"  {'the views, in all':<44} {'':>9} {total:8.3f}")
        # The runs beside the flips the page shows, in the report's order.
        flips = con.execute(
            "SELECT latest_run_id, baseline_run_id FROM v_test_case_flips ORDER BY "
            "direction <> 'pass_to_fail', agent, model, test_case_id LIMIT ?",
            [MAX_FLIPS]).fetchall()
        ids = sorted({r for pair in flips for r in pair if r is not None})
        one = ids[0] if ids else ""
        reads = {
            "runs": "SELECT * FROM runs WHERE run_id IN (SELECT unnest(?::VARCHAR[]))",
            "messages": "SELECT * FROM messages WHERE run_id IN (SELECT unnest(?::VARCHAR[])) "
                        "AND source = 'response'",
            "tool_calls": "SELECT * FROM tool_calls WHERE run_id IN "
                          "(SELECT unnest(?::VARCHAR[])) AND source = 'response'"}
        t_all, t_one = 0.0, 0.0
        for table, sql in reads.items():
            secs, rows = timed(sql, [ids])
            t_all += secs
            print(f"  {f'{table} of the {len(ids)} runs beside the flips':<44} {rows:>9,} "
                  f"{secs:8.3f}", flush=True)
            secs, rows = timed(sql, [[one]])
            t_one += secs
            print(f"  {f'{table} of one run':<44} {rows:>9,} {secs:8.3f}", flush=True)
        print(f"  {'the transcripts, one query per table':<44} {'':>9} {t_all:8.3f}")
        print(f"  {'views and transcripts':<44} {'':>9} {total + t_all:8.3f}")
        print(f"  (one run's three reads: {t_one:.3f} s; x {len(ids)} runs one by one: "
              f"{t_one * len(ids):.1f} s)")
    finally:
        con.close()


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs-per-night", type=int, default=7470)
    ap.add_argument("--pairs", type=int, default=56, help="agent x model pairs")
    ap.add_argument("--days", type=int, default=8, help="the latest night and the days before")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-spans", action="store_true",
                    help="response JSONL only, without the runs' spans")
    ap.add_argument("--profile-child", metavar="HOME", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.profile_child:
        profile_child(args.profile_child)
        return
    if args.runs_per_night < args.pairs or args.days < 2 or args.repeat < 1:
        ap.error("--runs-per-night must be at least --pairs, --days at least 2, --repeat "
                 "at least 1")
    shape(args.pairs)
    t = time.perf_counter()
    folder, generated = landing(args.runs_per_night, args.pairs, args.days,
                                spans=not args.no_spans)
    gen_s = time.perf_counter() - t
    meta = json.loads((folder / ".done").read_text())
    responses = sorted(folder.rglob("*.responses.jsonl"))
    lines = {f: f.read_bytes().count(b"\n") for f in responses}
    n_runs = sum(lines.values())
    n_last = sum(n for f, n in lines.items() if f.parent.name == responses[-1].parent.name)
    size = sum(f.stat().st_size for f in responses) / 2**20
    traces = sum(f.stat().st_size for f in folder.rglob("*.jsonl")) / 2**20 - size
    print(f"landing: {folder.relative_to(ROOT)}: {n_runs:,} runs over {args.days} days, "
          f"{n_last:,} on the last night; {len(meta['agents'])} agents x "
          f"{len(meta['models'])} models; {size:,.0f} MB of response JSONL"
          + (f" and {traces:,.0f} MB of their spans (span JSONL, OTLP for {OTLP_AGENT})"
             if traces else "")
          + f" ({f'generated in {gen_s:.1f} s' if generated else 'cached'})")
    print(f"  planted on the last night: pass rate drop {' / '.join(meta['dropped'])}, "
          f"crashes {' / '.join(meta['crashed'])}, 2 test cases not run "
          f"{' / '.join(meta['unrun'])}")
    home, ingested = home_of(folder)
    print(f"home: {home.relative_to(ROOT)}: `runlake ingest` {ingested}")
    print(f"load average before the report runs: {_load()}", flush=True)

    warm = subprocess.run(_runlake("report", "--home", str(home)), capture_output=True,
                          text=True, env=CHILD_ENV)
    if warm.returncode != 0:
        raise SystemExit(f"runlake report failed:\n{warm.stderr[-3000:]}")
    print("runlake report says (the warm-up run, not measured):")
    for line in warm.stdout.splitlines():
        print(f"  | {line[:160]}")
    cli: list[tuple[float, float]] = []
    prof: list[dict[str, Any]] = []
    loads = []
    for _ in range(args.repeat):
        cli.append(measure(_runlake("report", "--home", str(home))))
        prof.append(profiled(home))
        loads.append(os.getloadavg()[0])
    secs = [c[0] for c in cli]
    print(f"\n`runlake report --home HOME`, a fresh process, median of {args.repeat} "
          f"(interleaved with the profiled runs; load average (1 min) after each round: "
          f"{', '.join(f'{x:.2f}' for x in loads)})")
    print(f"  wall {statistics.median(secs):.2f} s (min {min(secs):.2f}, max {max(secs):.2f}),"
          f" peak RSS {max(c[1] for c in cli):,.0f} MB")

    def med(key: str) -> float:
        return statistics.median(p[key] for p in prof)

    last = prof[-1]
    print(f"write_report(HOME) under cProfile, a fresh process, median of {args.repeat}")
    print(f"  {last['queries']} queries, {med('query_s'):.2f} s in them + "
          f"{med('fetch_s'):.2f} s fetching their rows, of {med('total_s'):.2f} s in all; "
          f"peak RSS {max(p['peak_mb'] for p in prof):,.0f} MB")
    print("  calls and seconds by DuckDBPyConnection method (the last run):")
    for name, (nc, ct) in sorted(last["methods"].items(), key=lambda kv: -kv[1][1]):
        print(f"    {name:<20} {nc:>5} {ct:8.2f}")
    print("  queries by caller, and their seconds (the last run; a caller that issues one "
          "query per call, as verdict.reading.rows, is named with its own callers, and its "
          "seconds are its whole time, fetching included):")
    for where, (n, ct) in sorted(last["callers"].items(), key=lambda kv: -kv[1][1]):
        print(f"    {n:>5} {ct:8.2f}  {where}")
    print(f"\nthe floor: the views alone, median of {args.repeat} (load average {_load()})")
    print(f"  {'':<44} {'rows':>9} {'seconds':>8}")
    floor(home, args.repeat)


if __name__ == "__main__":
    main()
