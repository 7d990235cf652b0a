"""`python bench/scale.py --nights`: one night's partition run of each size into a home that
already holds a history of days, locally and/or into a bucket, this tree and another git REF's
(bench/scale.py's docstring says what is measured)."""

import json
import shutil
import statistics
import subprocess
import sys
import time
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.history import generate  # noqa: E402
from bench.ingest import OUT  # noqa: E402
from bench.partition_runs import FIRST, PARTITION, REQUESTS, Peak, load_average  # noqa: E402

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


def nights_landing(mb: float, history_days: int, history_mb: float) -> Path:
    """`history_days` landing days of `history_mb`, then the night of `mb` MB."""
    landing = OUT / f"scale-night-{mb:g}mb-after-{history_days}x{history_mb:g}mb"
    for i in range(history_days):
        day = NIGHT - timedelta(days=history_days - i)
        generate(landing / day.isoformat() / "nightly.responses.jsonl", [day], history_mb, i)
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
    stages = json.loads(out.decode().strip().splitlines()[-1])
    spans = stages.pop("_spans", [])
    if counted:
        time.sleep(0.5)
        stages.update(_by_stage(_requests()[before:], spans))
    return wall, mb, stages


def nights(sizes: list[float], targets: list[tuple[str, dict[str, str]]], against: str | None,
           repeat: int, history_days: int = HISTORY_DAYS, history_mb: float = HISTORY_MB) -> None:
    codes = [("this tree", ROOT, sys.executable)]
    if against:
        code, python = tree_python(against)
        codes.append((against, code, python))
    for name, _, python in codes:
        version = subprocess.run([python, "-c", "import duckdb; print(duckdb.__version__)"],
                                 capture_output=True, text=True, check=True).stdout.strip()
        print(f"{name}: duckdb {version}")
    landings = {mb: nights_landing(mb, history_days, history_mb) for mb in sizes}
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
                          f"(ingest {r[2].get('ingest', 0):.2f} s{asked}), load {load_average()}",
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
    print(f"load {load_average()}")
