"""How long a runlake command takes to start, beside the plainest way to ask DuckDB the same.

    python bench/startup.py [--repeat 7] [--home DIR]

Ingests data_samples/ into a temporary home (unless --home names one), then runs, interleaved,
each in a fresh process: `runlake --help`, `runlake sql "select 1"`, a query over the samples
(pass rate per agent), and the baseline: Python importing duckdb and running the same query on
the same warehouse file read-only. Prints the median wall time of each with the load average.
Bytecode caching is on (Python's default) whatever the shell says, so the warm-up run leaves
every command a warm start.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.ingest import ENV  # noqa: E402  (bytecode caching on, whatever the shell says)

BIN = Path(sys.executable).parent
QUERY = "select agent, avg(pass_rate) as pass_rate from v_pass_rates group by agent order by 1"


def timed(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env=ENV)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--home", type=Path)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = args.home or Path(tmp) / "home"
        if args.home is None:
            subprocess.run([BIN / "runlake", "ingest", REPO / "data_samples", "--home", home,
                            "--tools", REPO / "data_samples" / "tools.yaml"], check=True,
                           stdout=subprocess.DEVNULL)
        runlake = str(BIN / "runlake")
        cases = {
            "runlake --help": [runlake, "--help"],
            'runlake sql "select 1"': [runlake, "sql", "select 1", "--home", str(home)],
            "runlake sql (pass rate per agent)": [runlake, "sql", QUERY, "--home", str(home)],
            "baseline: python + duckdb, same query": [
                sys.executable, "-c",
                "import duckdb, sys; c = duckdb.connect(sys.argv[1], read_only=True); "
                "print(c.sql(sys.argv[2]).fetchall())",
                str(home / "warehouse.duckdb"), QUERY],
        }
        for cmd in cases.values():  # warm the page cache and the bytecode caches
            timed(cmd)
        times: dict[str, list[float]] = {k: [] for k in cases}
        for _ in range(args.repeat):
            for name, cmd in cases.items():
                times[name].append(timed(cmd))
        load = os.getloadavg()
        print(f"median of {args.repeat}, interleaved; load average {load[0]:.2f} {load[1]:.2f} "
              f"{load[2]:.2f}")
        for name, ts in times.items():
            print(f"  {name:<40} {statistics.median(ts):6.3f} s  "
                  f"(min {min(ts):.3f}, max {max(ts):.3f})")


if __name__ == "__main__":
    main()
