"""Where an ingest's time goes: each stage of `runlake ingest`, and each derived table.

    python bench/stages.py --mb 200 [--kind responses|spans|otlp] [--shape long] [--days 7]
                            [--repeat 3]

Generates the input as bench/ingest.py does (reused when present), then ingests it into an
empty home, each repeat in a fresh process, with a timer around each stage: the workers'
reading and staging, the summary, the written tables' commits, the derive (computing each
derived table and writing it, and the rest: the window tables, the lake-wide views, the
derived tables' commits), the upkeep and manifest, and the warehouse file. Prints the median
seconds of each stage, the wall time and the peak memory of the whole process tree.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.ingest import ENV, OUT, generate, measure  # noqa: E402

CHILD = """
import json, sys, time
t0 = time.perf_counter()
from transforms import ingest as ingest_module
from transforms.lake import commit, core
from transforms.warehouse import derive, lake_version, windows
import transforms.warehouse as warehouse
spent = {"imports": time.perf_counter() - t0}

def timed(owner, name, stage, label=None):
    inner = getattr(owner, name)
    def wrapper(*a, **k):
        s = time.perf_counter()
        try:
            return inner(*a, **k)
        finally:
            key = stage if label is None else f"{stage} {label(*a)}"
            spent[key] = spent.get(key, 0) + time.perf_counter() - s
    setattr(owner, name, wrapper)

timed(ingest_module, "summarize", "summary")
timed(lake_version, "derive", "derive")
timed(derive, "_compute", "derive: compute every table")
timed(windows, "write_weeks", "derive: compute and write", lambda con, rel, name, *a: name)
timed(commit, "commit_table", "commits of the written tables")
timed(derive, "replace_partitions", "commits of the derived tables")
timed(derive, "commit_linked", "commits of the tables shown as written")
timed(core.Lake, "maintain", "upkeep")
timed(warehouse, "publish", "warehouse file")
timed(ingest_module, "_ingest", "ingest after its checks")
run = ingest_module.schedule_blocks
def workers(*a, **k):
    s = time.perf_counter()
    yield from run(*a, **k)
    spent["workers: read and stage"] = time.perf_counter() - s
ingest_module.schedule_blocks = workers
ingest_module.ingest([__import__("pathlib").Path(sys.argv[1])], sys.argv[2], kind=sys.argv[3])
spent["total"] = time.perf_counter() - t0
print(json.dumps(spent))
"""


def run_once(src: Path, home: Path, kind: str) -> tuple[float, float, dict[str, float]]:
    """(wall s, peak tree MB, seconds by stage) of one ingest in a fresh process."""
    subprocess.run(["rm", "-rf", str(home)], check=True)
    out = home.parent / "stages.json"
    script = CHILD.replace("print(json.dumps(spent))",
                           f"open({str(out)!r}, 'w').write(json.dumps(spent))")
    wall, mb = measure([sys.executable, "-c", script, str(src), str(home), kind],
                       env={**ENV, "PYTHONPATH": str(ROOT)}, cwd=ROOT)
    stages = json.loads(out.read_text())
    subprocess.run(["rm", "-rf", str(home)], check=True)
    return wall, mb, stages


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=int, default=200)
    ap.add_argument("--kind", choices=["responses", "spans", "otlp"], default="responses")
    ap.add_argument("--shape", choices=["short", "long"], default="short")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--days", type=int, default=7, help="the days the runs spread over")
    args = ap.parse_args()
    src = generate(args.mb, args.kind, shape=args.shape, n_days=args.days)
    size_mb = src.stat().st_size / 1024 / 1024
    home = OUT / "stages" / "home"
    home.parent.mkdir(parents=True, exist_ok=True)
    run_once(src, home, args.kind)  # unmeasured: the bytecode caches
    runs = [run_once(src, home, args.kind) for _ in range(args.repeat)]
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"input: {src.name}, {size_mb:,.0f} MB, median of {args.repeat} runs; "
          f"load average {load}")
    wall = statistics.median(r[0] for r in runs)
    print(f"wall {wall:.2f} s ({size_mb / wall:.1f} MB/s), peak tree RSS "
          f"{max(r[1] for r in runs):,.0f} MB")
    for name in sorted(runs[0][2],
                       key=lambda n: -statistics.median(r[2].get(n, 0) for r in runs)):
        secs = statistics.median(r[2].get(name, 0) for r in runs)
        if secs >= 0.005:
            print(f"  {name:<48} {secs:>7.2f} s")


if __name__ == "__main__":
    main()
