"""A large file read by the workers one byte range each gives what a whole read gives: the same
lines with the same numbers and offsets, the same digest, the same lake."""

import hashlib
import random
from pathlib import Path

import orjson
import pytest

from devtools.synth import default_agents, make_run
from tests.transforms.test_lake import table_digests
from transforms.ingest import ingest
from transforms.read import ranges, streams
from transforms.read.readers import Block, BlockReader, InputFile, split_block


def _file(path: Path, data: bytes) -> InputFile:
    path.write_bytes(data)
    return InputFile(path, path.as_posix(), "responses", "none", len(data))


def _lines_whole(f: InputFile) -> list[tuple[int, int, bytes]]:
    return [line for b in BlockReader(f, 1 << 30) for line in split_block(b)]


def _lines_by_range(f: InputFile, block: int) -> list[tuple[int, int, bytes]]:
    out = []
    for r in ranges.plan(f, block):
        got = ranges.read(r)
        assert got.error is None and got.block is not None
        out += list(split_block(got.block))
    return out


@pytest.mark.parametrize("block", [1, 7, 64, 1000])
def test_ranges_hold_every_line_once_with_its_number_and_offset(tmp_path: Path,
                                                                 block: int) -> None:
    rng = random.Random(block)
    lines = [b"x" * rng.randrange(0, 200) for _ in range(300)]
    lines[5] = b"y" * 3000  # longer than a block: no line begins in several blocks
    data = b"\xef\xbb\xbf" + b"\n".join(lines).replace(b"xx\n", b"xx\r\n") + b"\n\n"
    for tail in (b"", b"last line without a newline"):
        f = _file(tmp_path / f"in-{len(tail)}.responses.jsonl", data + tail)
        assert _lines_by_range(f, block) == _lines_whole(f)


def test_pieces_combine_to_the_digest_of_a_whole_read(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Whichever range hashes a piece, the file's digest is the one a whole read gives, and it
    is the SHA-256 of the file for a file of one piece."""
    monkeypatch.setattr(streams, "HASH_PIECE", 1000)
    monkeypatch.setattr(ranges, "HASH_PIECE", 1000)
    rng = random.Random(3)
    data = b"".join(b"z" * rng.randrange(0, 300) + b"\n" for _ in range(200))
    f = _file(tmp_path / "in.responses.jsonl", data)
    whole = BlockReader(f, 1 << 30)
    list(whole)
    pieces = [hashlib.sha256(data[i:i + 1000]).digest() for i in range(0, len(data), 1000)]
    assert whole.sha256 == streams.file_sha256(f.path) \
        == hashlib.sha256(b"".join(pieces)).hexdigest()
    for block in (50, 999, 1000, 1001, 4000):
        got: dict[int, bytes] = {}
        for r in ranges.plan(f, block):
            read = ranges.read(r)
            assert not set(read.pieces) & set(got)
            got.update(read.pieces)
        assert streams.combine([got[i] for i in range(len(got))]) == whole.sha256
    small = _file(tmp_path / "small.responses.jsonl", data[:900])
    assert streams.file_sha256(small.path) == hashlib.sha256(data[:900]).hexdigest()


def test_a_file_changed_after_planning_is_an_error(tmp_path: Path) -> None:
    f = _file(tmp_path / "in.responses.jsonl", b"a\n" * 1000)
    first = next(ranges.plan(f, 100))
    f.path.write_bytes(b"ab\n" * 1000)
    got = ranges.read(first)
    assert got.block is None and "changed while it was read" in (got.error or "")
    f.path.unlink()
    assert "cannot read the file" in (ranges.read(first).error or "")


def test_workers_reading_ranges_build_the_lake_of_a_serial_read(tmp_path: Path) -> None:
    """A 40 MB file (three digest pieces) with malformed lines, ingested by two workers reading
    their own ranges and by one process reading it whole: the same rows, quarantine (line
    numbers and offsets) and digest."""
    rng = random.Random(5)
    from datetime import date

    days = [date(2026, 11, 20), date(2026, 11, 21)]
    agents = default_agents(days)
    path = tmp_path / "night.responses.jsonl"
    with open(path, "wb") as out:
        i = 0
        while out.tell() < 40 * 1024 * 1024:
            out.write(orjson.dumps(make_run(rng, agents[i % len(agents)], days[i % 2], i,
                                            case=i % 40)) + b"\n")
            if i % 5000 == 7:
                out.write(b'{"run_id": "cut\n\n[1, 2]\n')
            i += 1
    serial = ingest([path], tmp_path / "serial", workers=1)
    parallel = ingest([path], tmp_path / "parallel", workers=2, block_bytes=4 * 1024 * 1024)
    assert serial.files[0].error is None and parallel.files[0].error is None
    assert serial.files[0].quarantined == parallel.files[0].quarantined > 0
    assert table_digests(tmp_path / "serial") == table_digests(tmp_path / "parallel")
    from transforms import warehouse

    con = warehouse.connect(tmp_path / "parallel")
    (sha,) = con.execute("SELECT sha256 FROM ingest_files").fetchone()
    con.close()
    assert sha == streams.file_sha256(path)
    # Consecutive ranges are staged together: fewer files than ranges (ten of 4 MiB), each
    # table-month of the night in a few files, not one per range.
    lines = tmp_path / "parallel" / "lake" / "_lines"
    messages = list((lines / "messages").glob("month=*/*.parquet"))
    assert 1 <= len(messages) < 10
    # Unchanged, the file is skipped by a later ingest.
    assert ingest([path], tmp_path / "parallel", workers=2).files[0].skipped


def test_plan_blocks_are_those_a_worker_gets(tmp_path: Path) -> None:
    """A range's block starts the file (BOM removal) only at offset 0."""
    f = _file(tmp_path / "in.responses.jsonl", b"\xef\xbb\xbf{}\n" + b"{}\n" * 100)
    blocks = [ranges.read(r).block for r in ranges.plan(f, 50)]
    assert [b.is_file_start for b in blocks if isinstance(b, Block)] == \
        [True] + [False] * (len(blocks) - 1)
