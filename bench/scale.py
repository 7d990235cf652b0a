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
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.history import generate  # noqa: E402
from bench.ingest import OUT, measure  # noqa: E402
from devtools.memory import tree_rss_kb  # noqa: E402

FIRST = date(2026, 10, 1)
PARTITION = """
import json, sys, time
t0 = time.perf_counter()
import dagster as dg
from pipelines.assets.lake import add_landing_days
from pipelines.definitions import defs
from pipelines.resources import RunlakeResource
spent = {"imports": time.perf_counter() - t0}
spans = []  # (stage, start, end) in seconds since the epoch
if len(sys.argv) > 4:  # time the stages: the names both trees call them by
    import importlib
    def timed(module, name, stage):
        mod = importlib.import_module(module)
        inner = getattr(mod, name, None)
        if inner is None:
            return
        def wrapper(*a, **k):
            s, began = time.perf_counter(), time.time()
            try:
                return inner(*a, **k)
            finally:
                spent[stage] = spent.get(stage, 0) + time.perf_counter() - s
                spans.append((stage, began, time.time()))
        setattr(mod, name, wrapper)
    for module, name, stage in [
            ("pipelines.assets.lake", "ingest", "ingest"),
            ("transforms.warehouse", "staged", "views for the checks"),
            ("transforms.warehouse", "live", "views for the checks"),
            ("pipelines.assets.lake", "_day_metadata", "metadata"),
            ("transforms.warehouse.checks", "run_all", "checks"),
            ("transforms.warehouse", "publish", "publish"),
            ("pipelines.assets.report", "write_report", "report"),
            ("transforms.lake.doctor", "raise_if_damaged", "ingest: damage check"),
            ("transforms.lake.commit", "commit_table", "ingest: written tables' commits")]:
        timed(module, name, stage)
day, home, landing = sys.argv[1:4]
t1 = time.perf_counter()
instance = dg.DagsterInstance.ephemeral()
add_landing_days(instance, [day])
spent["dagster instance"] = time.perf_counter() - t1
t2 = time.perf_counter()
result = defs.resolve_job_def("ingest_day").execute_in_process(
    partition_key=day, instance=instance, raise_on_error=False,
    resources={"runlake": RunlakeResource(home=home, landing=landing)})
spent["job"] = time.perf_counter() - t2
failed = [e for e in result.all_events if e.is_step_failure
          and e.step_failure_data.error.cls_name != "DagsterAssetCheckFailedError"]
print(json.dumps({**spent, "_spans": spans}))
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
if len(sys.argv) > 1:  # a line per request into that file, after its time
    logging.basicConfig(filename=sys.argv[1], level=logging.INFO,
                        format="%(created).3f %(message)s")
else:
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
            total = sum(tree_rss_kb(p) for p in list(self.pids))
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


REQUESTS = OUT / "scale-moto-requests.log"
"""The emulator's request log of --nights (a line per request)."""


def start_moto(log: Path | None = None) -> tuple[subprocess.Popen[str], dict[str, str]]:
    """A moto S3 server on 127.0.0.1 with the bucket `bench`, logging its requests into
    `log` when given; its AWS_* settings."""
    if log is not None:
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text("")
    proc = subprocess.Popen([sys.executable, "-c", MOTO, *([str(log)] if log else [])],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
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


HISTORY_DAYS = 3
"""Days a night's home holds before its partition run (--nights; --history sets it)."""
HISTORY_MB = 1.0
"""MB of responses of each history day (--history-mb)."""
HISTORY = """
import sys
from pathlib import Path
from transforms.ingest import ingest
for p in sys.argv[2:]:  # a night at a time, as the nightly runs made them
    ingest([Path(p)], sys.argv[1])
"""
NIGHT = FIRST + timedelta(days=90)
"""The night measured: the history days are the days before it."""


def nights_landing(mb: float) -> Path:
    """HISTORY_DAYS landing days of HISTORY_MB, then the night of `mb` MB."""
    landing = OUT / f"scale-night-{mb:g}mb-after-{HISTORY_DAYS}x{HISTORY_MB:g}mb"
    for i in range(HISTORY_DAYS):
        day = NIGHT - timedelta(days=HISTORY_DAYS - i)
        generate(landing / day.isoformat() / "nightly.responses.jsonl", [day], HISTORY_MB, i)
    generate(landing / NIGHT.isoformat() / "nightly.responses.jsonl", [NIGHT], mb, 99)
    return landing


def tree_python(ref: str) -> tuple[Path, str]:
    """The code of a git REF and the Python of its own virtualenv (made from its uv.lock)."""
    from bench.nightly import tree

    code = tree(ref)
    python = code / ".venv" / "bin" / "python"
    if not python.exists():
        uv = ROOT / ".uv" / "bin" / "uv"
        subprocess.run([str(uv) if uv.exists() else "uv", "sync", "--frozen", "--quiet",
                        "--project", str(code)], check=True, cwd=code)
    return code, str(python)


def history_home(code: Path, python: str, landing: Path, target: str,
                 env: dict[str, str]) -> str:
    """A new home holding the history days of `landing`, each ingested on its own by the tree
    `code` (as its nightly runs would have made them; not timed)."""
    home = (f"s3://bench/history-{uuid.uuid4().hex[:8]}" if target == "s3"
            else str(OUT / f"scale-history-{uuid.uuid4().hex[:8]}"))
    history = sorted(str(f) for f in landing.rglob("*.jsonl") if NIGHT.isoformat() not in str(f))
    subprocess.run([python, "-c", HISTORY, home, *history], cwd=code,
                   env={**env, "PYTHONPATH": str(code)}, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return home


CACHE_FOLDERS = """
import sys
from transforms.objectstore import cache_folder
for url in sys.argv[1:]:
    print(cache_folder(url))
"""


def clone_home(code: Path, python: str, home: str, env: dict[str, str]) -> str:
    """A copy of `home` to run one night in: its folder, or every object under its prefix
    in the bucket (copied inside the emulator) and its local cache folder as the tree `code`
    names it."""
    if not home.startswith("s3://"):
        copy = str(OUT / f"scale-night-home-{uuid.uuid4().hex[:8]}")
        shutil.copytree(home, copy)
        return copy
    import boto3

    bucket, prefix = home[len("s3://"):].split("/", 1)
    copy = f"s3://{bucket}/night-{uuid.uuid4().hex[:8]}"
    new = copy.split("/", 3)[3]
    s3 = boto3.client("s3", endpoint_url=env["AWS_ENDPOINT_URL"], region_name=env["AWS_REGION"],
                      aws_access_key_id=env["AWS_ACCESS_KEY_ID"],
                      aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"])
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix + "/"):
        for o in page.get("Contents", []):
            s3.copy_object(Bucket=bucket, Key=new + o["Key"][len(prefix):],
                           CopySource={"Bucket": bucket, "Key": o["Key"]})
    folders = subprocess.run([python, "-c", CACHE_FOLDERS, home, copy], cwd=code,
                             env={**env, "PYTHONPATH": str(code)}, capture_output=True,
                             text=True, check=True).stdout.split("\n")
    if Path(folders[0]).is_dir():
        shutil.copytree(folders[0], folders[1])
    return copy


def remove_home(home: str) -> None:
    if not home.startswith("s3://"):
        shutil.rmtree(home, ignore_errors=True)


def _requests() -> list[float]:
    """When each request the emulator has logged so far came (seconds since the epoch)."""
    if not REQUESTS.exists():
        return []
    with REQUESTS.open("rb") as f:
        return [float(line.split(b" ", 1)[0]) for line in f if b"HTTP/1.1" in line]


def _by_stage(times: list[float], spans: list[list[Any]]) -> dict[str, float]:
    """`requests`, and `requests: <stage>` for each stage: the requests that came while its
    innermost timed stage ran (`other`: none, as Dagster's own steps and start-up)."""
    out: dict[str, float] = {"requests": len(times)}
    for t in times:
        inside = [(end - start, stage) for stage, start, end in spans if start <= t <= end]
        key = f"requests: {min(inside)[1] if inside else 'other'}"
        out[key] = out.get(key, 0) + 1
    return out


def night(code: Path, python: str, landing: Path, base: str, env: dict[str, str]
          ) -> tuple[float, float, dict[str, float]]:
    """(wall s, peak MB, stage seconds) of the night's partition run in a copy of the home
    `base` (its history); on the emulator also its `requests`."""
    home = clone_home(code, python, base, env)
    env = {**env, "PYTHONPATH": str(code)}
    pids: set[int] = set()
    peak = Peak(pids)
    counted = home.startswith("s3://") and REQUESTS.exists()
    if counted:
        time.sleep(0.5)  # the copy's last requests logged
    before = len(_requests()) if counted else 0
    start = time.perf_counter()
    try:
        proc = subprocess.Popen([python, "-c", PARTITION, NIGHT.isoformat(), home, str(landing),
                                 "stages"], cwd=code, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        pids.add(proc.pid)
        out, err = proc.communicate()
        wall = time.perf_counter() - start
        mb = peak.stop()
    finally:
        remove_home(home)
    if proc.returncode != 0:
        raise SystemExit(f"the night in {code} failed:\n{err.decode()[-3000:]}")
    import json

    stages = json.loads(out.decode().strip().splitlines()[-1])
    spans = stages.pop("_spans", [])
    if counted:
        time.sleep(0.5)
        stages.update(_by_stage(_requests()[before:], spans))
    return wall, mb, stages


def nights(sizes: list[float], targets: list[tuple[str, dict[str, str]]], against: str | None,
           repeat: int) -> None:
    codes = [("this tree", ROOT, sys.executable)]
    if against:
        code, python = tree_python(against)
        codes.append((against, code, python))
    for name, _, python in codes:
        version = subprocess.run([python, "-c", "import duckdb; print(duckdb.__version__)"],
                                 capture_output=True, text=True, check=True).stdout.strip()
        print(f"{name}: duckdb {version}")
    landings = {mb: nights_landing(mb) for mb in sizes}
    # Each tree's history once per night size and target (each tree writes its own lake);
    # every measured night runs in a copy of it.
    bases = {(mb, target, name): history_home(code, python, landings[mb], target, env)
             for mb in sizes for target, env in targets for name, code, python in codes}
    for name, code, python in codes:  # unmeasured: bytecode compiled, page cache warm
        target, env = targets[0]
        night(code, python, landings[min(sizes)], bases[(min(sizes), target, name)], env)
    got: dict[tuple[float, str, str], list[tuple[float, float, dict[str, float]]]] = {}
    for rep in range(repeat):
        for mb in sizes:
            for target, env in targets:
                for name, code, python in (codes if rep % 2 == 0 else codes[::-1]):
                    r = night(code, python, landings[mb], bases[(mb, target, name)], env)
                    got.setdefault((mb, target, name), []).append(r)
                    asked = (f", {r[2]['requests']:,.0f} requests" if "requests" in r[2]
                             else "")
                    print(f"  run {rep + 1}: {mb:g} MB {target} {name}: {r[0]:.2f} s "
                          f"(ingest {r[2].get('ingest', 0):.2f} s{asked}), load {_load()}",
                          flush=True)
    med = statistics.median
    print("\nsize target tree: wall | ingest | wall - ingest | peak MB  (medians of "
          f"{repeat}); stages")
    for (mb, target, name), rs in got.items():
        stages: dict[str, float] = {}
        for key in dict.fromkeys(k for r in rs for k in r[2]):
            stages[key] = med(r[2].get(key, 0.0) for r in rs)
        rest = med(r[0] - r[2].get("ingest", 0.0) for r in rs)
        print(f"{mb:g} MB {target} {name}: {med(r[0] for r in rs):.2f} s | "
              f"{stages.get('ingest', 0):.2f} s | {rest:.2f} s | {med(r[1] for r in rs):,.0f}; "
              + ", ".join(f"{k} {v:.0f}" if k.startswith("requests") else f"{k} {v:.2f}"
                          for k, v in stages.items()))
    for home in bases.values():
        remove_home(home)
    print(f"load {_load()}")


def main() -> None:
    global HISTORY_DAYS, HISTORY_MB
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, default=300)
    ap.add_argument("--days", type=int, default=30)
    ap.add_argument("--parallel", default="1,2")
    ap.add_argument("--targets", default="local",
                    help="local, s3 (a moto S3 server's bucket on 127.0.0.1), or both")
    ap.add_argument("--nights", help="sizes in MB of single nights, e.g. 1,68")
    ap.add_argument("--against", help="a git REF to measure beside this tree (--nights)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--history", type=int, default=HISTORY_DAYS,
                    help="--nights: days the home holds before the night, one ingest each")
    ap.add_argument("--history-mb", type=float, default=HISTORY_MB,
                    help="--nights: MB of each history day")
    args = ap.parse_args()
    import os

    HISTORY_DAYS, HISTORY_MB = args.history, args.history_mb

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
        print(f"nights of {args.nights} MB after {HISTORY_DAYS} days of {HISTORY_MB:g} MB "
              f"(an ingest each), load {_load()}")
        try:
            nights([float(x) for x in args.nights.split(",")], chosen, args.against,
                   args.repeat)
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
