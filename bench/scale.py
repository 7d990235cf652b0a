"""A month of nightly traces through the Dagster job, one and two day partitions at a time.

    python bench/scale.py [--mb 300] [--days 30] [--parallel 1,2] [--targets local,s3]

Generates --days landing days of response JSONL (--mb MB in all, spread evenly) under
bench/out/scale-<mb>mb/, then materializes the `ingest_day` job for every day, each partition
run in its own process as Dagster's run launcher starts them, with at most P runs at once for
each P of --parallel, into a fresh local home and/or (--targets) into a bucket of a moto S3
server started on 127.0.0.1. Prints the month's throughput, the per-partition time (median,
p90) and the peak memory of the whole process tree, beside the plain baseline
(bench/baseline.py) over the same files, in one process, measured in the same run.
"""

import argparse
import shutil
import statistics
import subprocess
import sys
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import date, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.history import generate  # noqa: E402
from bench.ingest import OUT, _tree_rss_kb, measure  # noqa: E402

FIRST = date(2026, 10, 1)
PARTITION = """
import sys
import dagster as dg
from pipelines.assets.lake import add_landing_days
from pipelines.definitions import defs
from pipelines.resources import RunlakeResource
day, home, landing = sys.argv[1:4]
instance = dg.DagsterInstance.ephemeral()
add_landing_days(instance, [day])
result = defs.resolve_job_def("ingest_day").execute_in_process(
    partition_key=day, instance=instance, raise_on_error=False,
    resources={"runlake": RunlakeResource(home=home, landing=landing)})
failed = [e for e in result.all_events if e.is_step_failure
          and e.step_failure_data.error.cls_name != "DagsterAssetCheckFailedError"]
sys.exit(1 if failed else 0)
"""
BASELINE = """
import sys
from pathlib import Path
sys.path.insert(0, ".")
from bench.baseline import main
out = Path(sys.argv[1])
for f in sys.argv[2:]:
    main(Path(f), out / Path(f).parent.name)
"""
MOTO = """
import logging, sys
from moto.server import ThreadedMotoServer
logging.getLogger("werkzeug").setLevel(logging.ERROR)
server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
server.start()
print(server.get_host_and_port()[1], flush=True)
sys.stdin.read()
server.stop()
"""


def month(mb: float, days: int) -> Path:
    landing = OUT / f"scale-{mb:g}mb-{days}d"
    for i in range(days):
        day = FIRST + timedelta(days=i)
        generate(landing / day.isoformat() / "nightly.responses.jsonl", [day], mb / days, i)
    return landing


class Peak:
    """The peak RSS of this process's children (the partition runs and their workers)."""

    def __init__(self, pids: set[int]) -> None:
        self.pids, self.mb, self._done = pids, 0.0, threading.Event()
        self._t = threading.Thread(target=self._sample, daemon=True)
        self._t.start()

    def _sample(self) -> None:
        while not self._done.is_set():
            total = sum(_tree_rss_kb(p) for p in list(self.pids))
            self.mb = max(self.mb, total / 1024)
            time.sleep(0.1)

    def stop(self) -> float:
        self._done.set()
        self._t.join()
        return self.mb


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


def start_moto() -> tuple[subprocess.Popen[str], dict[str, str]]:
    proc = subprocess.Popen([sys.executable, "-c", MOTO], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    url = f"http://127.0.0.1:{int(proc.stdout.readline())}"
    env = {"AWS_ENDPOINT_URL": url, "AWS_ACCESS_KEY_ID": "bench",
           "AWS_SECRET_ACCESS_KEY": "bench", "AWS_REGION": "us-east-1",
           "AWS_ALLOW_HTTP": "true"}
    import boto3

    boto3.client("s3", endpoint_url=url, region_name="us-east-1", aws_access_key_id="bench",
                 aws_secret_access_key="bench").create_bucket(Bucket="bench")
    return proc, env


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, default=300)
    ap.add_argument("--days", type=int, default=30)
    ap.add_argument("--parallel", default="1,2")
    ap.add_argument("--targets", default="local",
                    help="local, s3 (a moto S3 server's bucket on 127.0.0.1), or both")
    args = ap.parse_args()
    import os

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
    print(f"{total_mb:,.0f} MB of response JSONL over {args.days} days, load {_load()}")
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
                      f"p90 {q[-1]:5.1f} s; peak {peak:,.0f} MB; load {_load()}", flush=True)
                if target == "local":
                    shutil.rmtree(home, ignore_errors=True)
    finally:
        shutil.rmtree(base_out, ignore_errors=True)
        if moto is not None and moto.stdin is not None:
            moto.stdin.close()
            moto.wait(timeout=10)


if __name__ == "__main__":
    main()
