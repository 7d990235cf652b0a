"""Ingest benchmark: runlake vs a plain single-process normalizer, measured in the same run.

    python bench/ingest.py --mb 200 [--kind responses|spans|otlp] [--shape short|long]
                           [--days 7] [--workers N] [--repeat 3]

Generates response JSONL of realistic shape (bench/out/input-<MB>mb-v2.responses.jsonl, reused
when present; `--shape long`: long transcripts, about 19 KB and 16 messages a line, in
input-<MB>mb-long.responses.jsonl), then runs, each in a fresh process: the baseline
(bench/baseline.py) and `runlake ingest` into an empty home, after one unmeasured run of
each (bytecode caching on, as Python's default). Prints input MB/s (median of the repeats), the
peak resident memory of the whole process tree (workers included), sampled every 50 ms, and
the load average.
"""

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from devtools.memory import PeakSampler  # noqa: E402
from devtools.synth import default_agents, make_run, make_spans  # noqa: E402
from devtools.synth_otlp import to_otlp  # noqa: E402

OUT = ROOT / "bench" / "out"


def generate(mb: int, kind: str = "responses", seed: int = 11, shape: str = "short",
             n_days: int = 7) -> Path:
    """A response (or span) JSONL file of about `mb` MB: a week of runs of the sample agents
    (or their spans, half as bulk lines; or their spans as OTLP collector records, one per
    run); `shape` "long": long transcripts (devtools.synth.LONG_STEPS)."""
    import random
    from datetime import date, timedelta

    days_tag = "" if n_days == 7 else f"-{n_days}d"
    path = OUT / f"input-{mb}mb-{'v2' if shape == 'short' else shape}{days_tag}.{kind}.jsonl"
    if path.exists():
        return path
    OUT.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    days = [date(2026, 11, 14) + timedelta(days=i) for i in range(n_days)]
    agents = default_agents(days)
    target = mb * 1024 * 1024
    written = 0
    tmp = path.with_suffix(".tmp")
    per_day = target / len(days)
    with open(tmp, "wb") as f:
        i = 0
        while written < target:
            # A week of nightly runs, in day order, as a landing file of a week would hold.
            day = days[min(int(written // per_day), len(days) - 1)]
            run = make_run(rng, agents[i % len(agents)], day, i, case=i % 40,
                           long=shape == "long")
            if kind == "spans":
                spans = make_spans(rng, run)
                lines = [{"spans": spans}] if i % 2 else spans
            elif kind == "otlp":
                lines = [to_otlp(make_spans(rng, run))]
            else:
                lines = [run]
            for line in lines:
                data = orjson.dumps(line)
                f.write(data + b"\n")
                written += len(data) + 1
            i += 1
    tmp.rename(path)
    return path


ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
"""Python's default, bytecode cached on first import, whatever the shell says: with
PYTHONDONTWRITEBYTECODE set (this machine's shell sets it) every process, each worker's fork
server included, compiles every module it imports again (~0.3 s each)."""


def measure(cmd: list[str], env: dict[str, str] | None = None, cwd: Path | None = None,
            sample: bool = True, what: str | None = None) -> tuple[float, float]:
    """(wall seconds, peak tree RSS in MB, 0 unless `sample`) of a command, run with `env`
    (default ENV) in `cwd`; a failure exits naming `what` (default the command)."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env=ENV if env is None else env, cwd=cwd)
    sampler = PeakSampler(proc.pid)
    if sample:
        with sampler:
            _, err = proc.communicate()
    else:
        _, err = proc.communicate()
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{what or ' '.join(cmd)} failed:\n{err.decode()[-3000:]}")
    return elapsed, sampler.peak_mb


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=int, default=200)
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--kind", choices=["responses", "spans", "otlp"], default="responses")
    ap.add_argument("--shape", choices=["short", "long"], default="short")
    ap.add_argument("--days", type=int, default=7, help="the days the runs spread over")
    args = ap.parse_args()
    src = generate(args.mb, args.kind, shape=args.shape, n_days=args.days)
    size_mb = src.stat().st_size / 1024 / 1024
    py = sys.executable
    runlake = [str(Path(py).parent / "runlake"), "ingest", str(src)]
    if args.workers:
        runlake += ["--workers", str(args.workers)]
    results: dict[str, list[tuple[float, float]]] = {"baseline": [], "runlake": []}
    # One unmeasured run of each first: the bytecode caches, as on any machine after a day.
    warm = OUT / "run-warm"
    flag = [f"--{args.kind}"] if args.kind != "responses" else []
    measure([py, str(ROOT / "bench" / "baseline.py"), *flag, str(src), str(warm / "baseline")])
    measure([*runlake, "--home", str(warm / "home")])
    subprocess.run(["rm", "-rf", str(warm)], check=True)
    for i in range(args.repeat):
        out = OUT / f"run-{i}"
        subprocess.run(["rm", "-rf", str(out)], check=True)
        results["baseline"].append(measure([py, str(ROOT / "bench" / "baseline.py"), *flag,
                                            str(src), str(out / "baseline")]))
        results["runlake"].append(measure([*runlake, "--home", str(out / "home")]))
        subprocess.run(["rm", "-rf", str(out)], check=True)
    print(f"input: {src.name}, {size_mb:,.0f} MB, {args.repeat} runs each (median), after a "
          f"warm-up run of each; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'path':<10} {'seconds':>8} {'MB/s':>8} {'peak RSS MB':>12}")
    speeds = {}
    for name, rs in results.items():
        secs = statistics.median(r[0] for r in rs)
        rss = max(r[1] for r in rs)
        speeds[name] = size_mb / secs
        print(f"{name:<10} {secs:>8.2f} {speeds[name]:>8.1f} {rss:>12,.0f}")
    print(f"runlake / baseline throughput: {speeds['runlake'] / speeds['baseline']:.2f}x")


if __name__ == "__main__":
    main()
