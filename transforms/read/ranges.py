"""A large local file read by the workers themselves, one byte range each.

The parent only plans: it reads the file once to find where lines begin and how many lines
come before each range (counting newlines, far faster than parsing), and hands out ranges, not
bytes. Each worker reads its range, parses it, and hashes the digest pieces (streams.HASH_PIECE)
that begin in it; the parent combines the pieces' digests into the file's (streams.combine),
the same digest a file read whole gets. So the parent neither hashes nor copies the input to
the workers, and its memory does not grow with the block size.

Range k holds the lines that begin in [k*B, (k+1)*B) (B: the block size), so a line belongs to
exactly one range and the line numbers and byte offsets are those of a whole read.
"""

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from transforms.read.readers import Block, InputFile
from transforms.read.streams import HASH_PIECE, open_regular


@dataclass(frozen=True)
class FileRange:
    path: str
    start: int
    end: int
    first_line: int
    lines: int
    """Newlines in [start, end), as the parent counted them."""
    size: int
    """The file's size when it was planned (the last piece ends there), or -1 when the
    range's pieces all end before it."""
    pieces: tuple[int, ...] = ()
    """Indexes of the digest pieces this range's worker hashes (those that begin in it)."""


@dataclass
class RangeRead:
    block: Block | None
    pieces: dict[int, bytes] = field(default_factory=dict)
    error: str | None = None


def by_range(f: InputFile, block_bytes: int) -> bool:
    """Whether `f` is read range by range: a plain local file of lines, over one block."""
    from transforms.read import remote

    return (f.compression == "none" and not f.whole_document and f.size > block_bytes
            and not remote.is_s3(f.path))


def plan(f: InputFile, block_bytes: int) -> Iterator[FileRange]:
    """The ranges of `f` in order, each yielded as soon as its end (and the end of the digest
    pieces it hashes) is known. Reads the file once; raises OSError when it cannot be read."""
    step = max(block_bytes, 1)
    buf = bytearray(step)
    view = memoryview(buf)
    starts: list[tuple[int, int]] = []  # (offset where a range's lines begin, first line)
    planned: list[FileRange] = []  # ranges whose last piece may reach past what was read
    size = newlines = 0
    prev_ends_line = True
    with open_regular(f.path) as fh:
        while True:
            n = fh.readinto(view)  # type: ignore[attr-defined]
            if not n:
                break
            # The first line that begins in this chunk.
            if prev_ends_line:
                starts.append((size, newlines + 1))
            else:
                nl = buf.find(b"\n", 0, n)
                if 0 <= nl < n - 1:
                    starts.append((size + nl + 1, newlines + 2))
            newlines += buf.count(b"\n", 0, n)
            prev_ends_line = buf[n - 1] == 10
            size += n
            while len(starts) >= 2:
                (begin, line), (end, next_line) = starts[0], starts[1]
                planned.append(_range(f, begin, end, line, next_line - line))
                starts.pop(0)
            while planned and (not planned[0].pieces
                               or (planned[0].pieces[-1] + 1) * HASH_PIECE <= size):
                yield planned.pop(0)
    if starts:
        (begin, line), = starts
        planned.append(_range(f, begin, size, line, newlines + 1 - line))
    for r in planned:
        yield FileRange(r.path, r.start, r.end, r.first_line, r.lines, size, r.pieces)


def _range(f: InputFile, start: int, end: int, line: int, lines: int) -> FileRange:
    # The digest pieces that begin in [start, end), the first range also taking piece 0.
    lo = 0 if start == 0 else -(-start // HASH_PIECE)
    hi = -(-end // HASH_PIECE)
    return FileRange(str(f.path), start, end, line, lines, -1, tuple(range(lo, hi)))


def read(r: FileRange) -> RangeRead:
    """The range's lines as a block, and the digests of its pieces (read whole, past the
    range's end when a piece reaches beyond it). A file that is shorter or different than
    when it was planned is an error: the parent reports it and the file is read again next
    time."""
    pieces: dict[int, bytes] = {}
    try:
        with open_regular(Path(r.path)) as fh:
            fh.seek(r.start)
            data = fh.read(r.end - r.start)
            if len(data) != r.end - r.start or data.count(b"\n") != r.lines:
                return RangeRead(None, error=_changed(r))
            for i in r.pieces:
                lo = i * HASH_PIECE
                hi = lo + HASH_PIECE if r.size < 0 else min(lo + HASH_PIECE, r.size)
                if lo >= r.start and hi <= r.end:
                    pieces[i] = hashlib.sha256(
                        memoryview(data)[lo - r.start:hi - r.start]).digest()
                    continue
                fh.seek(lo)
                piece = fh.read(hi - lo)
                if len(piece) != hi - lo:
                    return RangeRead(None, error=_changed(r))
                pieces[i] = hashlib.sha256(piece).digest()
    except OSError as e:
        return RangeRead(None, error=f"cannot read the file: {e.strerror or e}")
    return RangeRead(Block(data, r.first_line, r.start, r.start == 0), pieces)


def _changed(r: FileRange) -> str:
    return (f"the file changed while it was read (bytes {r.start:,} to {r.end:,} differ from "
            "the first read): it is read again by the next ingest")
