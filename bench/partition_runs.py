"""What the scale benches share: a partition of the `ingest_day` job run in a process of its own
(as Dagster's run launcher starts one), the peak memory of such processes, and a moto S3 server
on 127.0.0.1 to run them into a bucket."""

import subprocess
import sys
import threading
import time
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.ingest import OUT  # noqa: E402
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


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])
