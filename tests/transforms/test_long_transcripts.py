"""A night of long transcripts (about 19 KB and 16 messages a line) ingests whole: memory
follows bytes, not the width of a row times the weeks a copy has open. Before, the derive's
weekly copy of `messages` buffered a row group of 122,880 rows per week (91 MiB of text for
rows of 800 bytes) and a 1 GB night failed with DuckDB's "Out of Memory Error"."""

import random
import subprocess
import sys
from datetime import date, timedelta
from pathlib import Path

import orjson
import pyarrow.parquet as pq
import pytest

from devtools.memory import PeakSampler
from devtools.synth import default_agents, make_run
from transforms.lake import Lake
from transforms.normalize import worker
from transforms.warehouse import derive
from transforms.warehouse.linked import LINK

pytestmark = pytest.mark.slow

MB = 300


def write_long_night(path: Path, mb: int) -> int:
    """A week of long-transcript runs of the sample agents, about `mb` MB: the lines written."""
    rng = random.Random(7)
    days = [date(2026, 11, 14) + timedelta(days=i) for i in range(7)]
    agents = default_agents(days)
    target, written, n = mb * 1024 * 1024, 0, 0
    with open(path, "wb") as f:
        while written < target:
            day = days[min(written * len(days) // target, len(days) - 1)]
            data = orjson.dumps(make_run(rng, agents[n % len(agents)], day, n, case=n % 40,
                                         long=True)) + b"\n"
            f.write(data)
            written += len(data)
            n += 1
    return n


def test_a_night_of_long_transcripts_ingests_with_row_groups_bounded_by_bytes(
        tmp_path: Path) -> None:
    src = tmp_path / "night.responses.jsonl"
    lines = write_long_night(src, MB)
    assert src.stat().st_size / lines > 15_000  # long rows, as agents that work at length write
    home = tmp_path / "home"
    proc = subprocess.Popen([str(Path(sys.executable).parent / "runlake"), "ingest", str(src),
                             "--home", str(home)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    with PeakSampler(proc.pid) as memory:
        _, err = proc.communicate(timeout=900)
    assert proc.returncode == 0, err[-2000:]
    # The whole process tree: the ingest, its workers and the derive's DuckDB.
    assert memory.peak_mb < 1024, f"{memory.peak_mb:.0f} MB"

    lake = Lake(home)
    snap = lake.tables_at()
    files = lake.file_uris("messages", snap["messages"])
    messages = 0
    derived_limit = int(derive.ROW_GROUP_BYTES.removesuffix("MB")) * 1024 * 1024
    for f in files:
        meta = pq.read_metadata(f)
        messages += meta.num_rows
        widest = max(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
        # A staged file shown as written holds a row group per ROW_GROUP_INPUT bytes of input;
        # a derived file, at most ROW_GROUP_BYTES: neither grows with the rows' width.
        shown = Path(f).name.startswith(LINK)
        limit = 2 * worker.ROW_GROUP_INPUT if shown else 1.5 * derived_limit
        assert widest <= limit, f"{Path(f).name}: a row group of {widest / 2**20:.0f} MiB"
    # Every message of every line is there.
    assert messages > 15 * lines
