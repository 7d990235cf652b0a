"""An ingest plans with the memory it has: the machine's, its container's limit (cgroup v1 or
v2) or RUNLAKE_MEMORY_MB, split between its parser processes and DuckDB; when it must stop
all the same, it says which stage, what it needed and what to change, in one line."""

import os
import re
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pyarrow.parquet as pq
import pytest

from tests.transforms.test_long_transcripts import write_long_night
from transforms import ingest_summary, memory
from transforms.errors import RunlakeError
from transforms.ingest import ingest
from transforms.lake import Lake
from transforms.warehouse import derive

REPO = Path(__file__).resolve().parents[2]


def _tree(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_the_limit_of_a_v2_container_and_its_parents_is_read(tmp_path: Path) -> None:
    proc = tmp_path / "cgroup"
    proc.write_text("0::/machine/box/job\n")
    fs = tmp_path / "fs"
    _tree(fs, {"cgroup.controllers": "memory\n", "machine/memory.max": "max\n",
               "machine/box/memory.max": f"{700 * 2**20}\n",
               "machine/box/job/memory.max": f"{900 * 2**20}\n"})
    assert memory.cgroup_mb(proc, fs) == 700  # a parent's limit binds its children
    (fs / "machine/box/memory.max").write_text("max\n")
    assert memory.cgroup_mb(proc, fs) == 900
    (fs / "machine/box/job/memory.max").write_text("max\n")
    assert memory.cgroup_mb(proc, fs) is None


def test_the_limit_of_a_v1_container_mounted_as_its_own_root_is_read(tmp_path: Path) -> None:
    proc = tmp_path / "cgroup"
    proc.write_text("5:cpu,cpuacct:/x\n4:memory:/process_api/abc/job\n0::/\n")
    fs = tmp_path / "fs"
    # The container sees its own cgroup as the mount's root: /proc names a longer path.
    _tree(fs, {"memory/memory.limit_in_bytes": "9223372036854771712\n",
               "memory/job/memory.limit_in_bytes": f"{600 * 2**20}\n"})
    assert memory.cgroup_mb(proc, fs) == 600
    (fs / "memory/job/memory.limit_in_bytes").write_text("9223372036854771712\n")
    assert memory.cgroup_mb(proc, fs) is None
    assert memory.cgroup_mb(tmp_path / "absent", fs) is None


def test_a_small_budget_runs_one_parser_and_gives_duckdb_less(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUNLAKE_MEMORY_MB", "600")
    plan = memory.budget()
    assert (plan.limit_mb, plan.source, plan.workers) == (600, "RUNLAKE_MEMORY_MB", 1)
    assert memory.DUCKDB_MIN_MB <= plan.duckdb_mb < memory.DUCKDB_MAX_MB
    # What the ingest's process and DuckDB hold in the derive stays under the limit.
    assert memory.PARENT_MB + plan.duckdb_mb * memory.DUCKDB_OVERHEAD <= 600
    monkeypatch.setenv("RUNLAKE_MEMORY_MB", "24000")
    plan = memory.budget(workers=4)
    assert (plan.duckdb_mb, plan.workers) == (memory.DUCKDB_MAX_MB, 4)
    monkeypatch.setenv("RUNLAKE_MEMORY_MB", "100")
    with pytest.raises(RunlakeError, match="RUNLAKE_MEMORY_MB"):
        memory.budget()  # refused by the setting's bounds: at least 400


@pytest.mark.parametrize("stage", ["summary", "derive"])
def test_a_stage_that_runs_out_of_memory_says_which_in_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stage: str) -> None:
    src = tmp_path / "night.responses.jsonl"
    write_long_night(src, 24)
    home = tmp_path / "home"
    ingest([REPO / "data_samples" / "2026-11-14"], home, build_views=False)
    before = Lake(home).tables_at()
    tiny = memory.Budget(4096, "the test's budget", 2, 1)
    # That stage alone is given 2 MB; the others plan as usual.
    module = ingest_summary if stage == "summary" else derive
    monkeypatch.setattr(module, "memory", SimpleNamespace(
        budget=lambda workers=None: tiny, stopped=memory.stopped,
        out_of_memory=memory.out_of_memory))
    with pytest.raises(memory.MemoryStop) as stop:
        ingest([src], home, build_views=False)
    told = str(stop.value)
    assert "\n" not in told
    where = "counting what it read" if stage == "summary" else "the derive"
    assert told.startswith("the ingest stopped while ") and where in told.split(":")[0], told
    # What it asked for, where DuckDB's message says (it does not always).
    assert re.search(r"DuckDB needed ([\d.]+ \w+ more with [\d.]+ \w+ of its 1.9 MiB in use"
                     r"|more memory than it had)", told), told
    assert "(2 MB for DuckDB, of 4,096 MB: the test's budget)" \
        in told and "RUNLAKE_MEMORY_MB" in told, told
    assert Lake(home).tables_at() == before  # the lake keeps its previous version


@pytest.fixture
def container() -> Iterator[Path]:
    """A memory cgroup of this machine's (v1 or v2) to run an ingest in; skipped where this
    user cannot make one."""
    name = f"runlake-test-{uuid.uuid4().hex[:8]}"
    for folder, limit in ((Path("/sys/fs/cgroup/memory") / name, "memory.limit_in_bytes"),
                          (Path("/sys/fs/cgroup") / name, "memory.max")):
        try:
            folder.mkdir()
        except OSError:
            continue
        try:
            (folder / limit).write_text(str(500 * 2**20))
        except OSError:
            folder.rmdir()
            continue
        try:
            yield folder
        finally:
            folder.rmdir()
        return
    pytest.skip("no memory cgroup can be made here (needs root and a memory controller)")


@pytest.mark.slow
def test_a_night_of_long_transcripts_ingests_in_a_500_mb_container(
        tmp_path: Path, container: Path) -> None:
    """Before, a parser process was ended by the system and the ingest died with a
    BrokenProcessPool traceback."""
    src = tmp_path / "night.responses.jsonl"
    lines = write_long_night(src, 300)
    env = {k: v for k, v in os.environ.items() if not k.startswith("RUNLAKE_")}
    done = subprocess.run(
        ["sh", "-c", f'echo $$ > "{container}/cgroup.procs" && exec "$0" "$@"',
         str(Path(sys.executable).parent / "runlake"), "ingest", str(src),
         "--home", str(tmp_path / "home")], capture_output=True, text=True, env=env,
        timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    lake = Lake(tmp_path / "home")
    files = lake.file_uris("runs", lake.tables_at()["runs"])
    assert sum(pq.read_metadata(f).num_rows for f in files) == lines
