"""How an ingest's cost grows with the lake's history, and a backfill over many days.

    python bench/history.py nightly [--history 7,60,180,365] [--night-mb 20] [--day-mb 2]
                                    [--weekday mon|sun] [--repeat 1]
    python bench/history.py backfill [--mb 200] [--days 180] [--repeat 3]

nightly: for each history length H, a lake is built with H days of runs (--day-mb MB of
response JSONL per day, one backfill ingest), then one new night of --night-mb MB is ingested
into it (views published, as every night), --repeat times into copies of the same lake,
interleaved with the plain baseline on the night's file; prints the median wall times, their
ratio and the peak memory of the process tree. The night is the same file for every H, dated
the day after the history (with --weekday, a Monday or a Sunday: the first or the last night
of its week).

backfill: --mb MB of response JSONL whose runs spread over --days days, ingested into an empty
home, against the plain baseline (bench/baseline.py) in the same run, interleaved; and the
same bytes spread over 7 days. Medians of --repeat runs with the load average beside them.
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

from bench.ingest import OUT, measure  # noqa: E402
from devtools.synth import default_agents, make_run  # noqa: E402

FIRST = date(2025, 1, 1)
WEEKDAYS = {"mon": 0, "sun": 6}


def generate(path: Path, days: list[date], mb: float, seed: int) -> Path:
    """Response JSONL of about `mb` MB whose runs spread evenly over `days`."""
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    agents = default_agents(days)
    target, written, i = mb * 1024 * 1024, 0, 0
    tmp = path.with_suffix(".tmp")
    with open(tmp, "wb") as f:
        while written < target:
            day = days[int(written * len(days) // target) % len(days)]
            data = orjson.dumps(make_run(rng, agents[i % len(agents)], day, i, case=i % 40))
            f.write(data + b"\n")
            written += len(data) + 1
            i += 1
    tmp.rename(path)
    return path


def _runlake(*args: str) -> list[str]:
    return [str(Path(sys.executable).parent / "runlake"), *args]


def nightly(history: list[int], night_mb: float, day_mb: float, repeat: int,
            weekday: str | None = None) -> None:
    print(f"{'history days':>12} {'history MB':>10} {'night s':>8} {'baseline s':>10} "
          f"{'day':>3} {'ratio':>6} {'night peak MB':>13} {'lake files':>10}")
    rows = []
    for h in history:
        first = FIRST
        if weekday is not None:  # the night on that weekday (Monday 0, Sunday 6)
            shift = ((first + timedelta(days=h)).weekday() - WEEKDAYS[weekday]) % 7
            first -= timedelta(days=shift)
        days = [first + timedelta(days=i) for i in range(h)]
        tag = f"-{days[0]}" if weekday is not None else ""
        past = generate(OUT / f"history-{h}d-{day_mb}mb{tag}.responses.jsonl", days,
                        h * day_mb, 7)
        night_day = days[-1] + timedelta(days=1)
        night = generate(OUT / f"night-{h}d-{night_mb}mb{tag}" / night_day.isoformat()
                         / "night.responses.jsonl", [night_day], night_mb, 8)
        home = OUT / f"history-home-{h}"
        saved = OUT / f"history-home-{h}-saved"
        for folder in (home, saved):
            shutil.rmtree(folder, ignore_errors=True)
        subprocess.run(_runlake("ingest", str(past), "--home", str(home)), check=True,
                       stdout=subprocess.DEVNULL)
        shutil.copytree(home, saved, symlinks=True)
        runs, bases = [], []
        for i in range(repeat):
            # The same lake before the night each time, at the path it was built at (a home
            # moved elsewhere is rebuilt on open); the baseline on the night's file,
            # interleaved.
            if i:
                shutil.rmtree(home)
                shutil.copytree(saved, home, symlinks=True)
            bases.append(measure([sys.executable, str(ROOT / "bench" / "baseline.py"),
                                  str(night), str(OUT / f"history-baseline-{i}")]))
            shutil.rmtree(OUT / f"history-baseline-{i}", ignore_errors=True)
            runs.append(measure(_runlake("ingest", str(night), "--home", str(home))))
        files = sum(1 for _ in (home / "lake").rglob("*.parquet"))
        secs = statistics.median(r[0] for r in runs)
        base = statistics.median(b[0] for b in bases)
        peak = max(r[1] for r in runs)
        rows.append((h, secs, peak))
        print(f"{h:>12} {past.stat().st_size / 2**20:>10,.0f} {secs:>8.2f} {base:>10.2f} "
              f"{night_day.strftime('%a')} "
              f"{base / secs:>5.2f}x {peak:>13,.0f} {files:>10,}", flush=True)
        shutil.rmtree(home, ignore_errors=True)
        shutil.rmtree(saved, ignore_errors=True)
    first = rows[0]
    for h, secs, peak in rows[1:]:
        print(f"{h} days / {first[0]} days: time {secs / first[1]:.2f}x, peak memory "
              f"{peak / first[2]:.2f}x")
    print(f"load average: {os.getloadavg()}")


def backfill(mb: int, n_days: int, repeat: int) -> None:
    wide = generate(OUT / f"backfill-{mb}mb-{n_days}d.responses.jsonl",
                    [FIRST + timedelta(days=i) for i in range(n_days)], mb, 9)
    week = generate(OUT / f"backfill-{mb}mb-7d.responses.jsonl",
                    [FIRST + timedelta(days=i) for i in range(7)], mb, 9)
    size = wide.stat().st_size / 2**20
    res: dict[str, list[tuple[float, float]]] = {"baseline": [], f"runlake {n_days}d": [],
                                                 "runlake 7d": []}
    loads = []
    for i in range(repeat):
        out = OUT / f"backfill-run-{i}"
        shutil.rmtree(out, ignore_errors=True)
        res["baseline"].append(measure([sys.executable, str(ROOT / "bench" / "baseline.py"),
                                        str(wide), str(out / "baseline")]))
        res[f"runlake {n_days}d"].append(measure(_runlake("ingest", str(wide), "--home",
                                                          str(out / "wide"))))
        res["runlake 7d"].append(measure(_runlake("ingest", str(week), "--home",
                                                  str(out / "week"))))
        loads.append(os.getloadavg()[0])
        shutil.rmtree(out, ignore_errors=True)
    print(f"input: {size:,.0f} MB, {repeat} interleaved runs each (median); load average "
          f"(1 min) after each round: {', '.join(f'{x:.2f}' for x in loads)}")
    speed = {}
    for name, rs in res.items():
        secs = statistics.median(r[0] for r in rs)
        speed[name] = size / secs
        print(f"{name:<14} {secs:>8.2f} s {speed[name]:>8.1f} MB/s "
              f"{max(r[1] for r in rs):>8,.0f} MB peak")
    print(f"runlake {n_days}d / baseline: {speed[f'runlake {n_days}d'] / speed['baseline']:.2f}x;"
          f" {n_days}d / 7d: {speed[f'runlake {n_days}d'] / speed['runlake 7d']:.2f}x")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="what", required=True)
    n = sub.add_parser("nightly")
    n.add_argument("--history", default="7,60,180,365")
    n.add_argument("--night-mb", type=float, default=20)
    n.add_argument("--day-mb", type=float, default=2)
    n.add_argument("--repeat", type=int, default=1)
    n.add_argument("--weekday", choices=sorted(WEEKDAYS), default=None)
    b = sub.add_parser("backfill")
    b.add_argument("--mb", type=int, default=200)
    b.add_argument("--days", type=int, default=180)
    b.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    if args.what == "nightly":
        nightly([int(x) for x in args.history.split(",")], args.night_mb, args.day_mb,
                args.repeat, args.weekday)
    else:
        backfill(args.mb, args.days, args.repeat)


if __name__ == "__main__":
    main()
