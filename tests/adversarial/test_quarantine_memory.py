"""A block of tiny bad lines (`1` a line: each a quarantine row) is written out as it is read,
never held whole: memory follows MAX_BUFFERED_ROWS, not the number of lines in a block
(8 MB of such lines were 4 million rows held at once, 2 GB)."""

from datetime import date
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from transforms.normalize import worker
from transforms.read.readers import Block


def test_a_block_of_tiny_bad_lines_is_staged_as_it_is_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(worker, "MAX_BUFFERED_ROWS", 1000)
    held: list[int] = []
    write = worker.StagedParts.write

    def counting(self: worker.StagedParts, buffers: list[Any]) -> None:
        held.append(sum(b.rows("quarantine") for b in buffers))
        write(self, buffers)

    monkeypatch.setattr(worker.StagedParts, "write", counting)
    n = 50_000
    task = worker.BlockTask(Block(b"1\n" * n, 1, 0, True), "ones.responses.jsonl",
                            "responses", date(2026, 11, 20), str(tmp_path), "p0")
    (res,) = worker.process_batch([task])
    assert (res.lines, res.quarantined) == (n, n)
    # Written at the first check (every 4,096 lines) past 1,000 rows: never all 50,000 at once.
    assert max(held) <= 4096 and len(held) >= n // 4096
    staged = pq.read_table(tmp_path / "quarantine")
    assert staged.num_rows == n
    assert sorted(staged.column("line_number").to_pylist()) == list(range(1, n + 1))
