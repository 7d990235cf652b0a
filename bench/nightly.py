"""What a nightly ingest of one new day costs as the lake's history grows, and what a reader
pays to start on a current, stale or moved home.

    python bench/nightly.py [--history 30,120,365] [--runs-per-day 20] [--runless 0.2]
                            [--repeat 3] [--against REF] [--budget-minutes 20]

For each history length H, devtools.synth writes H days of runs with their spans from
2025-01-01 (a --runless share of the runs has its spans written and not its line: traces with
no run, the most the lake-wide lookup of a span's run has to read), and the night after them,
the same number of runs (the travel agent regresses that night). The history is ingested once
into a home (`runlake ingest`, warehouse built), kept under bench/out/ as the seed. Then, for
each repeat, each H and each tree, interleaved, each step in a fresh process:

- the night: the seed copied back to the path it was built at, then `runlake ingest NIGHT`.
  Wall time from outside, split inside the process where the code allows: the written tables'
  commits (`Lake.commit_table`), the derive (`warehouse.derive.derive`, step 2 of the commit;
  the baseline's `warehouse.derived.derive`, run by `warehouse.publish` after the manifest
  commit; of it, the weeks' SQL (`_compute`, the baseline's `_derive_weeks`) and the derived
  tables' Delta commits (`replace_partitions`)), compaction and vacuum (`Lake.maintain`), the
  manifest (the rest of `Lake.commit`: its commit and the listings of table versions), the
  warehouse build (`publishing.build`); "read" is the rest of `ingest()` (the parser
  workers, the summary, the lock), "start" what the process spends outside `ingest()`
  (interpreter, imports, printing the report). Peak RSS of the process tree (workers
  included), sampled every 50 ms; the bytes of the files the step added or changed under
  lake/ (removed files are not subtracted);
- `runlake sql "select count(*) from runs"` start to answer: on the warehouse file the night
  built (current); with the seed's warehouse file put back (stale: a commit not followed by a
  build, as `runlake ingest` leaves it when the build is skipped or died); and with the home
  renamed (moved: the file names the old paths). The stale and moved homes are put back as
  they were after each.

With --against, the same for the tree of a git REF (exported with git archive under
bench/out/). Prints the median of the repeats and the load average before and after; stops
after the repeat during which --budget-minutes passed (at least one repeat) and says so.
"""

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.ingest import ENV, OUT, measure  # noqa: E402
from devtools.synth import default_agents, make_run, make_spans  # noqa: E402

FIRST = date(2025, 1, 1)
QUERY = "select count(*) from runs"

CLI = """
import sys
from transforms.command import main
sys.argv = ["runlake", *sys.argv[1:]]
main()
"""

NIGHT = """
import json, sys, time
t0 = time.perf_counter()
out = sys.argv[1]
import transforms.ingest as ing
from transforms.lake import core
from transforms.warehouse import publishing

spent = {}
inside = []  # the timed steps under way

def wrap(owner, name, key):
    f = getattr(owner, name, None)
    if f is None:
        return
    def timed(*a, **k):
        t = time.perf_counter()
        inside.append(key)
        try:
            return f(*a, **k)
        finally:
            inside.pop()
            took = time.perf_counter() - t
            spent[key] = spent.get(key, 0.0) + took
            if inside and inside[-1] == "commit":  # a step of the commit sequence
                spent["in_commit"] = spent.get("in_commit", 0.0) + took
    setattr(owner, name, timed)

wrap(ing, "ingest", "ingest")
wrap(core.Lake, "commit", "commit")
wrap(core.Lake, "commit_table", "tables")
wrap(core.Lake, "maintain", "maintain")
wrap(ing, "derive", "derive")         # step 2 of the commit (the derived tables)
wrap(publishing, "derive", "derive")  # run by publish after the commit (the week folders)
wrap(publishing, "build", "build")
import importlib
try:  # inside the derive: the weeks' SQL, and the derived tables' Delta commits
    dv = importlib.import_module("transforms.warehouse.derive")
    wrap(dv, "_compute", "derive_sql")
    wrap(dv, "replace_partitions", "derive_commits")
except ModuleNotFoundError:  # the week folders
    dv = importlib.import_module("transforms.warehouse.derived")
    wrap(dv, "_derive_weeks", "derive_sql")
sys.argv = ["runlake", "ingest", *sys.argv[2:]]
from transforms.command import main
try:
    main()
finally:
    spent["process"] = time.perf_counter() - t0
    with open(out, "w") as fh:
        json.dump(spent, fh)
"""


def generate(folder: Path, days: int, per_day: int, runless: float) -> Path:
    """`days` days of response and span JSONL from FIRST under folder/history/, and the day
    after them under folder/night/."""
    if (folder / "done").exists():
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    for sub in ("history", "night"):
        (folder / sub).mkdir(parents=True)
    rng = random.Random(3)
    ds = [FIRST + timedelta(days=i) for i in range(days + 1)]
    agents = default_agents(ds)
    for sub, span in (("history", range(days)), ("night", range(days, days + 1))):
        with open(folder / sub / "r.responses.jsonl", "wb") as r, \
                open(folder / sub / "s.spans.jsonl", "wb") as s:
            for n in span:
                for i in range(per_day):
                    line = make_run(rng, agents[i % len(agents)], ds[n], n * per_day + i,
                                    case=i)
                    for sp in make_spans(rng, line):
                        sp.get("log_request", {}).pop("input", None)  # prompts: not the point
                        s.write(orjson.dumps(sp) + b"\n")
                    if rng.random() >= runless:
                        r.write(orjson.dumps(line) + b"\n")
    (folder / "done").write_text("")
    return folder


def tree(ref: str) -> Path:
    """The code of a git REF, exported under bench/out/."""
    out = OUT / f"tree-{ref}"
    if not out.exists():
        tmp = OUT / f".tree-{ref}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref],
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive, check=True)
        tmp.rename(out)
    return out


def env_for(code: Path) -> dict[str, str]:
    drop = ("RUNLAKE_HOME", "RUNLAKE_WAREHOUSE", "RUNLAKE_TOOLS", "RUNLAKE_MODEL_ALIASES",
            "RUNLAKE_PRICES")
    return {**{k: v for k, v in ENV.items() if k not in drop}, "PYTHONPATH": str(code)}


def run(code: Path, args: list[str], sample: bool = False) -> tuple[float, float]:
    """(wall seconds, peak RSS MB of the process tree or 0) of `python -c args[0] args[1:]`
    in the tree `code`."""
    return measure([sys.executable, "-c", *args], env=env_for(code), cwd=code, sample=sample,
                   what=f"{args[1:]} in {code}")


def listing(folder: Path) -> dict[str, tuple[int, int]]:
    """path -> (bytes, mtime ns) of every file under `folder`."""
    out = {}
    for dirpath, _, names in os.walk(folder):
        for n in names:
            p = os.path.join(dirpath, n)
            st = os.stat(p)
            out[os.path.relpath(p, folder)] = (st.st_size, st.st_mtime_ns)
    return out


def written_bytes(before: dict[str, tuple[int, int]], lake: Path) -> dict[str, int]:
    """Bytes of the files added or changed under `lake` since `before`, by what holds them:
    the written tables, the derived ones, the manifest."""
    layered = (lake / "_lines").is_dir()  # the derived tables' layout: lake/_lines/<table>
    out = {"written": 0, "derived": 0, "manifest": 0}
    for path, (size, mtime) in listing(lake).items():
        if before.get(path) == (size, mtime):
            continue
        top = path.split(os.sep, 1)[0]
        if top == "ingest_files":
            out["manifest"] += size
        elif top == "_derived" or (layered and top not in ("_lines", "quarantine")
                                   and not top.startswith(".")):
            out["derived"] += size
        else:
            out["written"] += size
    return out


def warehouse_files(home: Path) -> list[Path]:
    """warehouse.duckdb and what a build keeps beside it (the baseline's state stamp)."""
    return [p for p in home.iterdir() if p.name.startswith(("warehouse.duckdb",
                                                            ".warehouse.duckdb"))]


class Case:
    """One tree on one history length: its seed home and where the nights run."""

    def __init__(self, name: str, code: Path, landing: Path) -> None:
        self.name, self.code, self.landing = name, code, landing
        tag = name.replace(" ", "-")
        self.seed = OUT / f"{landing.name}-seed-{tag}"
        self.home = OUT / f"{landing.name}-home-{tag}"
        self.moved = OUT / f"{landing.name}-moved-{tag}"
        self.saved = OUT / f"{landing.name}-wh-{tag}"

    def prepare(self) -> float:
        """Build the seed (the history ingested at the path the nights run at); its seconds,
        0 when it was there."""
        if (self.seed / "done").exists():
            return 0.0
        for p in (self.seed, self.home, self.saved):
            shutil.rmtree(p, ignore_errors=True)
        wall, _ = run(self.code, [CLI, "ingest", str(self.landing / "history"),
                                  "--home", str(self.home)])
        self.saved.mkdir(parents=True)
        for p in warehouse_files(self.home):
            shutil.copy2(p, self.saved / p.name)
        self.home.rename(self.seed)
        (self.seed / "done").write_text("")
        return wall

    def restore(self) -> None:
        for p in (self.home, self.moved):
            shutil.rmtree(p, ignore_errors=True)
        subprocess.run(["cp", "-a", str(self.seed), str(self.home)], check=True)
        (self.home / "done").unlink()

    def sql(self, home: Path) -> float:
        return run(self.code, [CLI, "sql", QUERY, "--home", str(home)])[0]

    def once(self, scratch: Path) -> dict[str, float]:
        """One night and the three reader starts."""
        self.restore()
        before = listing(self.home / "lake")
        out = scratch / "spent.json"
        wall, rss = run(self.code, [NIGHT, str(out), str(self.landing / "night"),
                                    "--home", str(self.home)], sample=True)
        spent = json.loads(out.read_text())
        written = written_bytes(before, self.home / "lake")
        row = {
            "wall": wall, "rss": rss,
            "tables": spent.get("tables", 0.0),
            "derive": spent.get("derive", 0.0),
            "derive_sql": spent.get("derive_sql", 0.0),
            "derive_commits": spent.get("derive_commits", 0.0),
            "maintain": spent.get("maintain", 0.0),
            # The rest of Lake.commit: the manifest commit and the listings of table versions.
            "manifest": spent.get("commit", 0.0) - spent.get("in_commit", 0.0),
            "build": spent.get("build", 0.0),
            "read": 0.0, "start": wall - spent.get("ingest", 0.0),
            **{f"bytes_{k}": float(v) for k, v in written.items()},
        }
        # What ingest() spent outside the timed steps: the workers, summary, lock, publish's
        # own checks.
        row["read"] = spent.get("ingest", 0.0) - sum(
            row[k] for k in ("tables", "derive", "maintain", "manifest", "build"))
        row["sql_current"] = self.sql(self.home)
        # Stale: the file of the lake version before the night.
        after = {p.name: p.read_bytes() for p in warehouse_files(self.home)}
        for p in warehouse_files(self.home):
            p.unlink()
        for p in self.saved.iterdir():
            shutil.copy2(p, self.home / p.name)
        row["sql_stale"] = self.sql(self.home)
        for p in warehouse_files(self.home):
            p.unlink()
        for name, data in after.items():
            (self.home / name).write_bytes(data)
        # Moved: the current file, in a home at another path.
        self.home.rename(self.moved)
        row["sql_moved"] = self.sql(self.moved)
        shutil.rmtree(self.moved)
        return row


def fmt_row(label: str, rows: list[dict[str, float]]) -> str:
    m = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
    mb = (m["bytes_written"] + m["bytes_derived"] + m["bytes_manifest"]) / 2**20
    return (f"  {label:<22} {m['wall']:6.2f} s {m['rss']:6.0f} MB | tables {m['tables']:.2f}"
            f"  derive {m['derive']:.2f} (weeks' SQL {m['derive_sql']:.2f}, Delta commits "
            f"{m['derive_commits']:.2f})  maintain {m['maintain']:.2f}  manifest "
            f"{m['manifest']:.2f}  build {m['build']:.2f}  read {m['read']:.2f}  start "
            f"{m['start']:.2f} | lake +{mb:.2f} MiB (written {m['bytes_written'] / 2**20:.2f},"
            f" derived {m['bytes_derived'] / 2**20:.2f}, manifest "
            f"{m['bytes_manifest'] / 2**20:.3f}) | sql current {m['sql_current']:.2f}  stale "
            f"{m['sql_stale']:.2f}  moved {m['sql_moved']:.2f} s "
            f"(walls {min(r['wall'] for r in rows):.2f} to {max(r['wall'] for r in rows):.2f})")


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--history", default="30,120,365")
    ap.add_argument("--runs-per-day", type=int, default=20)
    ap.add_argument("--runless", type=float, default=0.2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--against")
    ap.add_argument("--budget-minutes", type=float, default=20.0)
    a = ap.parse_args()
    t0 = time.monotonic()
    print(f"load average at the start: {load()}", flush=True)
    histories = [int(h) for h in a.history.split(",")]
    codes = {"this tree": ROOT} | ({a.against: tree(a.against)} if a.against else {})
    cases: dict[int, list[Case]] = {}
    for h in histories:
        landing = generate(OUT / f"nightly-{h}d-{a.runs_per_day}-{a.runless}", h,
                           a.runs_per_day, a.runless)
        cases[h] = [Case(name, code, landing) for name, code in codes.items()]
        for c in cases[h]:
            took = c.prepare()
            if took:
                print(f"  seed {h} days, {c.name}: history ingested in {took:.1f} s", flush=True)
    times: dict[tuple[int, str], list[dict[str, float]]] = {
        (h, c.name): [] for h in histories for c in cases[h]}
    with tempfile.TemporaryDirectory() as scratch:
        for c in cases[histories[0]]:  # bytecode caches and page cache: one unmeasured night
            c.once(Path(scratch))
        done = 0
        for _ in range(a.repeat):
            for h in histories:
                for c in cases[h]:
                    times[(h, c.name)].append(c.once(Path(scratch)))
            done += 1
            if time.monotonic() - t0 > a.budget_minutes * 60 and done < a.repeat:
                print(f"budget of {a.budget_minutes:g} min spent: {done} of {a.repeat} "
                      "repeats", flush=True)
                break
    per_day = a.runs_per_day
    print(f"nightly ingest of one day ({per_day} runs with their spans, {a.runless:.0%} of "
          f"the runs' spans with no run), median of {done} fresh processes each, interleaved; "
          f"{(time.monotonic() - t0) / 60:.1f} min in all")
    for h in histories:
        landing = cases[h][0].landing / "history"
        runs = (landing / "r.responses.jsonl").read_bytes().count(b"\n")
        spans = (landing / "s.spans.jsonl").read_bytes().count(b"\n")
        print(f"{h} days of history: {runs:,} runs, {spans:,} spans")
        for c in cases[h]:
            print(fmt_row(c.name, times[(h, c.name)]))
    print(f"load average at the end: {load()}")


if __name__ == "__main__":
    main()
