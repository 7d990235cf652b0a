"""What looking up the runs of spans out of reach costs a nightly derive.

    python bench/derive_reach.py [--days 365] [--runs-per-day 40] [--runless 0.2]
                                 [--repeat 5] [--against REF]

Builds a lake of --days days of runs with their spans (devtools.synth; a --runless share of
the runs has its spans written and not its line: traces with no run, every span of which
meets no run within a day, the most the lake-wide lookup has to read), one ingest. Then times
`warehouse.derive` as a nightly ingest pays it: the lake version's folder and the newest week
removed, so that week is computed again, every other week read back, and the lake-wide step
(transforms.warehouse.derived.LAKE_WIDE) done. Median of --repeat runs, each in a fresh
process, for this tree and, with --against, for the tree of a git REF (exported with git
archive), interleaved; the lake-wide step's own time is printed for this tree.
"""

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
from datetime import date, timedelta
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.ingest import OUT  # noqa: E402
from devtools.synth import default_agents, make_run, make_spans  # noqa: E402

FIRST = date(2025, 1, 1)

INGEST = """
import sys
from pathlib import Path
from transforms.ingest import ingest
ingest([Path(sys.argv[1])], Path(sys.argv[2]))
"""

TIMED = """
import json, shutil, sys, time
from pathlib import Path
from transforms.lake import Lake
from transforms.warehouse import derived

home = Path(sys.argv[1])
lake = Lake(home)
state = lake.state()
base = home / "lake" / derived.DERIVED
version = base / derived.derived_dir(state).rsplit("/", 1)[-1]
if version.exists():  # a nightly: its own week again, the others read back
    weeks = json.loads((version / derived.WEEKS_FILE).read_text())
    shutil.rmtree(version)
    shutil.rmtree(base / derived.WEEKS / weeks[-1], ignore_errors=True)
wide = [0.0, 0.0]
step = getattr(derived, "_derive_lake_wide", None)
if step is not None:
    def timed(*a, **k):
        t, c = time.perf_counter(), time.process_time()
        step(*a, **k)
        wide[0] += time.perf_counter() - t
        wide[1] += time.process_time() - c
    derived._derive_lake_wide = timed
t, c = time.perf_counter(), time.process_time()
derived.derive(home)
print(time.perf_counter() - t, time.process_time() - c, *wide)
"""


def generate(folder: Path, days: int, per_day: int, runless: float) -> Path:
    """Response and span JSONL of `days` days from FIRST."""
    if (folder / "done").exists():
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    rng = random.Random(3)
    ds = [FIRST + timedelta(days=i) for i in range(days)]
    agents = default_agents(ds)
    with open(folder / "r.responses.jsonl", "wb") as r, \
            open(folder / "s.spans.jsonl", "wb") as s:
        for n, day in enumerate(ds):
            for i in range(per_day):
                line = make_run(rng, agents[i % len(agents)], day, n * per_day + i, case=i)
                for span in make_spans(rng, line):
                    span.get("log_request", {}).pop("input", None)  # prompts: not the point
                    s.write(orjson.dumps(span) + b"\n")
                if rng.random() >= runless:
                    r.write(orjson.dumps(line) + b"\n")
    (folder / "done").write_text("")
    return folder


def tree(ref: str) -> Path:
    """The code of a git REF, exported under bench/out/."""
    out = OUT / f"tree-{ref}"
    if not out.exists():
        out.mkdir(parents=True)
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref],
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(out)], input=archive, check=True)
    return out


def timed(code: Path, home: Path) -> tuple[float, ...]:
    """Wall and CPU seconds of the derive, then of its lake-wide step (0 for a tree without
    one)."""
    env = {**os.environ, "PYTHONPATH": str(code)}
    out = subprocess.run([sys.executable, "-c", TIMED, str(home)], check=True, env=env,
                         cwd=code, capture_output=True, text=True).stdout.split()
    return tuple(float(x) for x in out)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--days", type=int, default=365)
    ap.add_argument("--runs-per-day", type=int, default=40)
    ap.add_argument("--runless", type=float, default=0.2)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--against")
    a = ap.parse_args()
    landing = generate(OUT / f"reach-{a.days}d-{a.runs_per_day}-{a.runless}", a.days,
                       a.runs_per_day, a.runless)
    codes = {"this tree": ROOT} | ({a.against: tree(a.against)} if a.against else {})
    homes = {}
    for name, code in codes.items():
        home = OUT / f"{landing.name}-home-{name.replace(' ', '-')}"
        if not home.exists():
            subprocess.run([sys.executable, "-c", INGEST, str(landing), str(home)], check=True,
                           cwd=code, env={**os.environ, "PYTHONPATH": str(code)})
        homes[name] = home
    times: dict[str, list[tuple[float, ...]]] = {n: [] for n in codes}
    for _ in range(a.repeat):
        for name, code in codes.items():
            times[name].append(timed(code, homes[name]))
    spans = (landing / "s.spans.jsonl").read_bytes().count(b"\n")
    runs = (landing / "r.responses.jsonl").read_bytes().count(b"\n")
    print(f"{a.days} days, {runs:,} runs, {spans:,} spans ({a.runless:.0%} of the runs' "
          f"spans with no run); nightly derive, median of {a.repeat}:")
    for name, ts in times.items():
        wall, cpu, wide_wall, wide_cpu = (statistics.median(t[i] for t in ts) for i in range(4))
        print(f"  {name:<12} {wall:6.2f} s wall, {cpu:6.2f} s CPU (lake-wide step {wide_wall:.3f} "
              f"s wall, {wide_cpu:.3f} s CPU)")
    print(f"load average: {os.getloadavg()}")


if __name__ == "__main__":
    main()
