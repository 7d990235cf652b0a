"""A month of nightly traces through the Dagster job, one and two day partitions at a time.

    python bench/scale.py [--mb 300] [--days 30] [--parallel 1,2] [--targets local,s3]
    python bench/scale.py --nights 1,68 [--targets local,s3] [--against REF] [--repeat 3]

Generates --days landing days of response JSONL (--mb MB in all, spread evenly) under
bench/out/scale-<mb>mb/, then materializes the `ingest_day` job for every day, each partition
run in its own process as Dagster's run launcher starts them, with at most P runs at once for
each P of --parallel, into a fresh local home and/or (--targets) into a bucket of a moto S3
server started on 127.0.0.1. Prints the month's throughput, the per-partition time (median,
p90) and the peak memory of the whole process tree, beside the plain baseline
(bench/baseline.py) over the same files, in one process, measured in the same run.

--nights: one night's partition run of each size (MB of response JSONL in one landing day) into
a home that already holds --history days of --history-mb MB (3 of 1 MB unless told; each day
ingested on its own, as nightly runs made them, once per tree, and copied for every measured
night; not timed), locally and/or into the bucket, this tree and (--against) the tree of a git
REF in its own virtualenv (its uv.lock, so its own DuckDB), interleaved, --repeat times each;
prints the medians of the run's wall time (a fresh process, as a run launcher starts it), of
the ingest inside it, of the fixed cost (wall minus ingest), of each stage and, into the
bucket, of the requests the emulator served (its log: bench/out/scale-moto-requests.log), in
all and by the innermost timed stage that was running when each came.
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import scale_nights  # noqa: E402
from bench.history import generate  # noqa: E402
from bench.ingest import OUT, measure  # noqa: E402
from bench.partition_runs import (  # noqa: E402
    FIRST,
    PARTITION,
    REQUESTS,
    Peak,
    load_average,
    start_moto,
)

BASELINE = """
import sys
from pathlib import Path
sys.path.insert(0, ".")
from bench.baseline import main
out = Path(sys.argv[1])
for f in sys.argv[2:]:
    main(Path(f), out / Path(f).parent.name)
"""

def month(mb: float, days: int) -> Path:
    landing = OUT / f"scale-{mb:g}mb-{days}d"
    for i in range(days):
        day = FIRST + timedelta(days=i)
        generate(landing / day.isoformat() / "nightly.responses.jsonl", [day], mb / days, i)
    return landing


def run_month(landing: Path, home: str, parallel: int, env: dict[str, str]
              ) -> tuple[float, list[float], float]:
    """(wall seconds, per-partition seconds, peak MB) of every day's partition run."""
    days = sorted(p.name for p in landing.iterdir() if p.is_dir())
    pids: set[int] = set()
    peak = Peak(pids)

    def one(day: str) -> float:
        start = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-c", PARTITION, day, home, str(landing)],
                                cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE)
        pids.add(proc.pid)
        _, err = proc.communicate()
        pids.discard(proc.pid)
        if proc.returncode != 0:
            raise SystemExit(f"partition {day} failed:\n{err.decode()[-3000:]}")
        return time.perf_counter() - start

    start = time.perf_counter()
    with ThreadPoolExecutor(parallel) as pool:
        each = list(pool.map(one, days))
    wall = time.perf_counter() - start
    return wall, each, peak.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, default=300)
    ap.add_argument("--days", type=int, default=30)
    ap.add_argument("--parallel", default="1,2")
    ap.add_argument("--targets", default="local",
                    help="local, s3 (a moto S3 server's bucket on 127.0.0.1), or both")
    ap.add_argument("--nights", help="sizes in MB of single nights, e.g. 1,68")
    ap.add_argument("--against", help="a git REF to measure beside this tree (--nights)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--history", type=int, default=scale_nights.HISTORY_DAYS,
                    help="--nights: days the home holds before the night, one ingest each")
    ap.add_argument("--history-mb", type=float, default=scale_nights.HISTORY_MB,
                    help="--nights: MB of each history day")
    args = ap.parse_args()

    if args.nights:
        base = {k: v for k, v in os.environ.items()
                if not k.startswith("RUNLAKE_") and k != "PYTHONDONTWRITEBYTECODE"}
        chosen: list[tuple[str, dict[str, str]]] = []
        server = None
        if "local" in args.targets.split(","):
            chosen.append(("local", base))
        if "s3" in args.targets.split(","):
            server, aws = start_moto(REQUESTS)
            chosen.append(("s3", {**base, **aws, "XDG_CACHE_HOME": str(OUT / "scale-cache")}))
        print(f"nights of {args.nights} MB after {args.history} days of {args.history_mb:g} MB "
              f"(an ingest each), load {load_average()}")
        try:
            scale_nights.nights([float(x) for x in args.nights.split(",")], chosen,
                                args.against, args.repeat, args.history, args.history_mb)
        finally:
            if server is not None and server.stdin is not None:
                server.stdin.close()
                server.wait(timeout=10)
        return
    landing = month(args.mb, args.days)
    total_mb = sum(f.stat().st_size for f in landing.rglob("*.jsonl")) / 2**20
    base_env = {k: v for k, v in os.environ.items() if not k.startswith("RUNLAKE_")}
    wanted = args.targets.split(",")
    targets: list[tuple[str, dict[str, str]]] = [("local", base_env)] if "local" in wanted \
        else []
    moto = None
    if "s3" in wanted:
        moto, aws = start_moto()
        targets.append(("s3", {**base_env, **aws,
                               "XDG_CACHE_HOME": str(OUT / "scale-cache")}))
    print(f"{total_mb:,.0f} MB of response JSONL over {args.days} days, load {load_average()}")
    files = sorted(landing.rglob("*.jsonl"))
    base_out = OUT / "scale-baseline"
    try:
        for target, env in targets:
            for p in (int(x) for x in args.parallel.split(",")):
                shutil.rmtree(base_out, ignore_errors=True)
                base_out.mkdir(parents=True)
                # The plain baseline over the same files, one process, just before.
                b_wall, _ = measure([sys.executable, "-c", BASELINE, str(base_out),
                                     *map(str, files)])
                home = (f"s3://bench/scale-{uuid.uuid4().hex[:8]}" if target == "s3"
                        else str(OUT / f"scale-home-{p}"))
                if target == "local":
                    shutil.rmtree(home, ignore_errors=True)
                wall, each, peak = run_month(landing, home, p, env)
                q = statistics.quantiles(each, n=10)
                print(f"{target:>5} {p} at a time: {wall:7.1f} s, {total_mb / wall:5.1f} MB/s "
                      f"(baseline {total_mb / b_wall:5.1f} MB/s, {b_wall:.1f} s); "
                      f"per partition median {statistics.median(each):5.1f} s, "
                      f"p90 {q[-1]:5.1f} s; peak {peak:,.0f} MB; load {load_average()}", flush=True)
                if target == "local":
                    shutil.rmtree(home, ignore_errors=True)
    finally:
        shutil.rmtree(base_out, ignore_errors=True)
        if moto is not None and moto.stdin is not None:
            moto.stdin.close()
            moto.wait(timeout=10)


if __name__ == "__main__":
    main()
