"""What the verdict's scores and what-changed cost, and how it grows with the lake's history.

    python bench/verdict.py [--history 8,60,180] [--per-agent 40] [--repeat 3]

For each history length H, a lake of H days of synthetic runs (devtools/synth.py: the samples'
agents, --per-agent runs per agent a day, each with its metadata keys and two named scores in
outcome.scores) is built once under bench/out/verdict-<H>d/ (reused when present). Then, on one
read-only connection to its warehouse, --repeat times and interleaved, after one unmeasured
round:
- `regressions(day, 7)` alone: the pairs' figures, which the verdict read before the scores and
  the changes joined it;
- each of `score_regressions(day, 7)` and `what_changed(day, 7)` alone: what they add;
- the whole verdict as the report reads it (transforms.report.nightly, without its cache: the
  window, regressions with each pair's scores and changes, the missing test cases and the
  crashed runs, four queries), beside the same four queries as they were before the scores
  and the changes (4aea03c).
Prints the medians (seconds) with the rows each returned and the load average. The window is
always 8 days: what grows with H is what the queries scan to find it.
"""

import argparse
import os
import random
import statistics
import sys
import time
from datetime import date, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from devtools.synth import dumps, runs  # noqa: E402
from transforms import warehouse  # noqa: E402
from transforms.ingest import ingest  # noqa: E402
from transforms.report import nightly  # noqa: E402

OUT = ROOT / "bench" / "out"
LAST = date(2026, 11, 20)


def build(days: int, per_agent: int) -> Path:
    """A home with `days` days of runs ending on LAST, ingested once (reused when present)."""
    root = OUT / f"verdict-{days}d-{per_agent}r"
    home = root / "home"
    if (home / "warehouse.duckdb").exists():
        return home
    landing = root / "landing"
    rng = random.Random(days)
    span = [LAST - timedelta(days=d) for d in range(days - 1, -1, -1)]
    files: dict[Path, list[str]] = {}
    for day, agent, line in runs(seed=days, days=span, per_agent_per_day=per_agent):
        if line["outcome"].get("status") in ("passed", "failed"):
            line["outcome"]["scores"] = {"helpfulness": round(rng.random(), 3),
                                         "correctness": round(rng.random(), 3)}
        files.setdefault(landing / day.isoformat() / f"{agent}.responses.jsonl", []).append(
            dumps(line))
    for path, lines in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n")
    ingest([landing], home)
    return home


QUERIES = {
    "regressions alone": "SELECT * FROM regressions(?, ?)",
    "score_regressions alone": "SELECT * FROM score_regressions(?, ?)",
    "what_changed alone": "SELECT * FROM what_changed(?, ?)",
    "the verdict before (4 queries)": "OLD",
    "the verdict now (4 queries)": None,  # nightly's own
}

OLD = [  # the verdict's queries before the scores and the changes (4aea03c)
    "SELECT w.*, (SELECT list(DISTINCT day ORDER BY day) FROM runs WHERE day BETWEEN "
    "w.baseline_start AND w.baseline_end) AS run_days FROM comparison_window(?, ?) AS w",
    "SELECT * FROM regressions(?, ?) ORDER BY regressed DESC, is_regression DESC, q_value "
    "NULLS LAST, agent, model",
    "SELECT * FROM missing_test_cases(?, ?) ORDER BY agent, model, test_case_id",
]
CRASHED = "SELECT * FROM v_crashed_runs WHERE day = ? ORDER BY agent, model, started_at, run_id"


def verdict_query(con: object, params: list[object]) -> int:
    """The verdict as transforms.report.nightly reads it (without its cache)."""
    verdict = nightly.read_uncached(con, LAST, 7)  # type: ignore[arg-type]
    return len(verdict.pairs)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--history", default="8,60,180")
    ap.add_argument("--per-agent", type=int, default=40)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print("| history (days) | runs | query | median s | rows | load |")
    print("|---:|---:|---|---:|---:|---|")
    for days in [int(x) for x in args.history.split(",")]:
        home = build(days, args.per_agent)
        con = warehouse.connect(home)
        n_runs = con.execute("SELECT count(*) FROM runs").fetchone()[0]  # type: ignore[index]
        params: list[object] = [LAST, 7]
        times: dict[str, list[float]] = {k: [] for k in QUERIES}
        rows: dict[str, int] = {}
        for i in range(args.repeat + 1):
            for name, sql in QUERIES.items():
                start = time.perf_counter()
                if sql is None:
                    n = verdict_query(con, params)
                elif sql == "OLD":
                    n = [len(con.execute(q, params).fetchall()) for q in OLD][1]
                    con.execute(CRASHED, [LAST]).fetchall()
                else:
                    n = len(con.execute(sql, params).fetchall())
                if i:  # the first round warms the caches, unmeasured
                    times[name].append(time.perf_counter() - start)
                rows[name] = n
        con.close()
        load = " ".join(f"{x:.1f}" for x in os.getloadavg())
        for name in QUERIES:
            print(f"| {days} | {n_runs:,} | {name} | {statistics.median(times[name]):.3f} | "
                  f"{rows[name]} | {load} |")


if __name__ == "__main__":
    main()
