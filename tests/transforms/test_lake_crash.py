"""kill -9 at every stage of an ingest: after the re-run the lake equals a clean ingest of the
same files, and a read-only reader polling the warehouse throughout never fails."""

import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.transforms.test_lake import run, table_digests
from transforms import db, warehouse
from transforms.ingest import ingest

# Slow: an ingest killed at every stage of its commit, each in a process of its own
# (`make test-fast` leaves it out).
pytestmark = pytest.mark.slow

# The ingest runs in a child process with one function wrapped to SIGKILL the process right
# after (or, for the file move, right before committing) its n-th call.
CHILD = """
import os, signal, sys
from pathlib import Path
from transforms import lake
from transforms.lake import files as lakefiles
from transforms.warehouse import derive, publishing
from transforms.ingest import ingest

owner, name, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
target = {"Lake": lake.Lake, "lakefiles": lakefiles, "warehouse": publishing,
          "derive": derive}[owner]
real = getattr(target, name)
calls = [0]

def wrapped(*args, **kw):
    out = real(*args, **kw)
    calls[0] += 1
    if calls[0] == n:
        os.kill(os.getpid(), signal.SIGKILL)
    return out

setattr(target, name, wrapped)
ingest([Path(p) for p in sys.argv[5:]], Path(sys.argv[4]), workers=1)
"""

STAGES = [
    ("lakefiles", "file_stats", 1),   # staged files moved into runs, nothing committed
    ("Lake", "commit_table", 1),     # runs committed, the other tables not
    ("Lake", "commit_table", 5),     # half of the tables committed
    ("Lake", "commit_table", 9),     # every data table committed, nothing derived
    ("derive", "replace_partitions", 1),   # one derived table rewritten
    ("derive", "replace_partitions", 12),  # most derived tables rewritten, flags not
    ("derive", "commit_linked", 2),   # two of the tables shown as written committed
    ("Lake", "maintain", 1),          # every table derived and compacted, the manifest not
    ("Lake", "commit_manifest", 1),   # the manifest committed, the warehouse file not built
    ("warehouse", "build", 1),        # built
]


def landing_files(folder: Path, version: int) -> list[Path]:
    """Three response files; version 2 changes a.jsonl and adds c.jsonl."""
    folder.mkdir(parents=True, exist_ok=True)
    a = [run(f"a{i}", "2026-11-20", f"a v{version}") for i in range(4)]
    if version == 2:
        a.append(run("a9", "2026-12-01", "new month"))
    out = {"a.responses.jsonl": a,
           "b.responses.jsonl": [run(f"b{i}", "2026-11-21") for i in range(3)] + ["not json"]}
    if version == 2:
        out["c.responses.jsonl"] = [run("b1", "2026-11-22", "later line wins")]
    import json
    for name, lines in out.items():
        (folder / name).write_text("".join(
            (json.dumps(x) if isinstance(x, dict) else x) + "\n" for x in lines))
    return sorted(folder.iterdir())


class Poller(threading.Thread):
    """A reader that opens the warehouse read-only and queries it until stopped."""

    def __init__(self, home: Path) -> None:
        super().__init__(daemon=True)
        self.home, self.stop, self.errors, self.reads = home, threading.Event(), [], 0

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                con = db.connect(str(warehouse.path(self.home)), read_only=True)
                try:
                    con.execute("SELECT count(*) FROM runs JOIN messages USING (run_id)")
                    con.execute("SELECT count(*) FROM checks.lines_accounted_for")
                finally:
                    con.close()
                self.reads += 1
            except Exception as e:  # noqa: BLE001 - any failure is what the test looks for
                self.errors.append(repr(e))


@pytest.fixture(scope="module")
def clean_digests(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The digests of a clean ingest of version 2 of the files, their landing folder's path
    left out: the same for every stage, so made once."""
    return clean_ingest_digests(tmp_path_factory.mktemp("clean"))


def clean_ingest_digests(root: Path) -> dict[str, str]:
    """A clean ingest of version 2 of the files into a home of its own: its table_digests,
    the landing folder's path left out."""
    landing = root / "landing"
    ingest(landing_files(landing, 2), root / "clean", workers=1)
    return table_digests(root / "clean", landing=str(landing))


@pytest.mark.parametrize("owner,name,n", STAGES, ids=[f"{o}.{n}#{i}" for o, n, i in STAGES])
def test_kill_at_every_stage_then_rerun_is_a_clean_ingest(tmp_path: Path, owner: str,
                                                          name: str, n: int,
                                                          clean_digests: dict[str, str]) -> None:
    landing, home = tmp_path / "landing", tmp_path / "home"
    ingest(landing_files(landing, 1), home, workers=1)
    files = landing_files(landing, 2)
    poller = Poller(home)
    poller.start()
    try:
        child = subprocess.run(
            [sys.executable, "-c", CHILD, owner, name, str(n), str(home), *map(str, files)],
            capture_output=True, timeout=300, env={**os.environ, "PYTHONPATH": os.getcwd()})
        assert child.returncode == -9, child.stderr.decode()[-2000:]
        ingest(files, home, workers=1)
    finally:
        poller.stop.set()
        poller.join()
    assert poller.errors == [] and poller.reads > 0
    assert table_digests(home, landing=str(landing)) == clean_digests
    con = warehouse.connect(home)
    try:
        assert con.execute("SELECT count(*) FROM checks.lines_accounted_for").fetchone() == (0,)
        got: Any = con.execute("SELECT run_id, final_response FROM runs WHERE run_id IN "
                               "('a0', 'a9', 'b1') ORDER BY 1").fetchall()
    finally:
        con.close()
    assert got == [("a0", "a v2"), ("a9", "new month"), ("b1", "later line wins")]
    assert not list((home / ".scratch").glob("*"))
