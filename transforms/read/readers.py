"""Readers: input files to bounded blocks of whole lines, and lines to records or quarantine.

Owns how a file's kind is told (docs/formats.md), how `.gz`/`.zst` are opened, how a stream is
cut into blocks that end on a line boundary (so workers can parse blocks independently), and
the rule for every line: it becomes a record, a counted blank, or a quarantine row with a reason.

The JSON rule is strict RFC 8259 as orjson reads it: NaN, Infinity, lone surrogates, numbers
that overflow a double and nesting deeper than 1,024 levels are rejected (quarantine
`invalid_json`); a duplicate key keeps its last value; integers beyond 64 bits are kept exact
(transforms.read.jsontext), for the readers to store as JSON text or flag where a count is expected.
"""

import gzip
import io
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

import orjson

from transforms import kinds
from transforms.read import jsontext, remote
from transforms.read.streams import (
    READ_BYTES,
    HashingReader,
    ZstdStream,
    open_regular,
    reason,
    stream_errors,
)

KINDS: tuple[str, ...] = kinds.KINDS
"""How a file is read (docs/formats.md): the input kinds of transforms.kinds, each one module
there (its suffixes, its reader, its normalizer)."""
READABLE_KINDS: tuple[str, ...] = KINDS
"""Kinds this version of runlake normalizes: every kind of transforms.kinds has a normalizer.
A file of no kind (or one runlake does not read) is reported, never silently skipped."""

BOM = b"\xef\xbb\xbf"
DEFAULT_BLOCK_BYTES = 16 * 1024 * 1024

_COMPRESSION = {".gz": "gzip", ".zst": "zstd"}

QuarantineCode = Literal["invalid_utf8", "nul_byte", "invalid_json", "not_an_object",
                         "unrecognized_record"]
"""invalid_utf8: the line is not UTF-8; nul_byte: a raw NUL byte; invalid_json: not RFC 8259
JSON; not_an_object: valid JSON that is not an object; unrecognized_record: an object with no
key of a run envelope or response body."""


@dataclass(frozen=True)
class InputFile:
    path: Path
    source_file: str
    kind: str | None
    compression: str
    size: int
    mtime_ns: int | None = None
    """When a file in a bucket was last modified (from its listing; None for local files)."""

    @property
    def whole_document(self) -> bool:
        """The file is one record, pretty-printed or not, counted as line 1: its kind's reader
        says so of its name (a durable state file named *.json, not *.jsonl)."""
        fmt = kinds.INPUT_FORMATS.get(self.kind) if self.kind is not None else None
        if fmt is None or not fmt.document_endings:
            return False
        name = self.path.name.lower()
        for ext in _COMPRESSION:
            name = name.removesuffix(ext)
        return name.endswith(fmt.document_endings)


def compression_of(path: Path) -> str:
    return _COMPRESSION.get(path.suffix.lower(), "none")


def kind_of(path: Path) -> str | None:
    """The kind of a file from its name (any case), else from the nearest folder named for a
    kind."""
    name = path.name.lower()
    if compression_of(path) != "none":
        name = name[: -len(path.suffix)]
    kind = kinds.kind_by_suffix(name)
    if kind is not None:
        return kind
    if not (name.endswith(".jsonl") or name.endswith(".json")):
        return None
    for parent in path.parents:
        if parent.name in KINDS:
            return parent.name
    return None


def source_name(path: Path) -> str:
    """How the lake names a file: its absolute path, so the same file has one name whatever
    directory runlake runs from (the CLI, Dagster), and a re-run from elsewhere changes
    nothing. A file in a bucket: its s3:// URL."""
    if remote.is_s3(path):
        return remote.S3Path(path).url
    return path.resolve().as_posix()


Skipped = list[tuple[str, str]]
"""Paths a discovery passed over that the user should hear of: (path, reason)."""


@dataclass
class Block:
    data: bytes
    first_line: int
    first_offset: int
    is_file_start: bool
    whole: bool = False
    """The block is a whole-document file: one record, newlines and all."""


class BlockReader:
    """Cuts one input file into blocks of whole lines; `sha256` is ready once it is exhausted."""

    def __init__(self, f: InputFile, block_bytes: int = DEFAULT_BLOCK_BYTES) -> None:
        self.file = f
        self.block_bytes = block_bytes
        self._hasher = HashingReader(open_regular(f.path))
        self.error: str | None = None
        """Why the file could not be read to its end (a corrupt or cut compressed stream, a
        failing disk); the blocks before it are kept."""

    @property
    def sha256(self) -> str:
        return self._hasher.sha256.hexdigest()

    @property
    def bytes_read(self) -> int:
        """Bytes of the stored file read so far (compressed bytes for .gz/.zst)."""
        return self._hasher.bytes_read

    def _stream(self) -> IO[bytes]:
        buffered = io.BufferedReader(self._hasher, buffer_size=1024 * 1024)
        if self.file.compression == "gzip":
            return gzip.GzipFile(fileobj=buffered, mode="rb")  # type: ignore[return-value]
        if self.file.compression == "zstd":
            return ZstdStream(self._hasher, buffered)  # type: ignore[return-value]
        return buffered

    def _drain(self) -> None:
        """Read the rest of the stored file, so sha256 covers every byte."""
        try:
            while self._hasher.read(1024 * 1024):
                pass
        except OSError as e:
            self.error = self.error or reason(e)

    def __iter__(self) -> Iterator[Block]:
        if self.file.whole_document:
            yield from self._whole()
            return
        line_no, offset, first = 1, 0, True
        pending: list[bytes] = []
        size = 0
        step = min(self.block_bytes, READ_BYTES)
        errors = stream_errors(self.file.compression)
        try:
            stream = self._stream()
            # read1 hands over what is decompressed so far, so a cut stream loses no whole line.
            read = getattr(stream, "read1", stream.read)
            while True:
                try:
                    chunk = read(step)
                except errors as e:
                    # A corrupt or cut compressed stream: keep what was read, say why it ended.
                    self.error = reason(e)
                    chunk = b""
                if chunk:
                    pending.append(chunk)
                    size += len(chunk)
                    if size < self.block_bytes:
                        continue
                buf = b"".join(pending)
                cut = buf.rfind(b"\n") if chunk else len(buf) - 1
                if cut >= 0:
                    data = buf[: cut + 1]
                    yield Block(data, line_no, offset, first)
                    first = False
                    line_no += data.count(b"\n")
                    offset += len(data)
                    buf = buf[cut + 1:]
                pending, size = ([buf], len(buf)) if buf else ([], 0)
                if not chunk:
                    break
            self._drain()
        finally:
            self._hasher.close()

    def _whole(self) -> Iterator[Block]:
        """The whole (decompressed) file as one block; empty files yield nothing."""
        errors = stream_errors(self.file.compression)
        try:
            stream = self._stream()
            parts = []
            while True:
                try:
                    chunk = stream.read(READ_BYTES)
                except errors as e:
                    self.error = reason(e)
                    break
                if not chunk:
                    break
                parts.append(chunk)
            data = b"".join(parts)
            self._drain()
        finally:
            self._hasher.close()
        if data:
            yield Block(data, 1, 0, True, whole=True)


# --- lines --------------------------------------------------------------------------------

LineResult = tuple[int, int, bytes]
"""(line_number, byte_offset, raw line without terminator)."""


def split_block(block: Block) -> Iterator[LineResult]:
    """The lines of a block without terminators (\\n or \\r\\n); a file's BOM is removed.
    A whole-document block is one line."""
    data = block.data
    start = 0
    if block.is_file_start and data.startswith(BOM):
        start = len(BOM)
    if block.whole:
        yield 1, start, data[start:]
        return
    line_no, pos, end = block.first_line, start, len(data)
    while pos < end:
        nl = data.find(b"\n", pos)
        if nl < 0:
            nl = end
        line = data[pos:nl]
        if line.endswith(b"\r"):
            line = line[:-1]
        yield line_no, block.first_offset + pos, line
        line_no += 1
        pos = nl + 1


def parse_line(line: bytes) -> tuple[Any, str | None, str | None]:
    """(object, None, None) for a JSON object, else (None, error_code, message)."""
    try:
        obj = jsontext.loads(line)
    except orjson.JSONDecodeError as e:
        if b"\x00" in line:
            column = line.index(b"\x00") + 1
            return None, "nul_byte", f"raw NUL byte at column {column}"
        try:
            line.decode("utf-8")
        except UnicodeDecodeError as u:
            return None, "invalid_utf8", f"invalid UTF-8 at byte {u.start + 1}: {u.reason}"
        return None, "invalid_json", str(e)
    if not isinstance(obj, dict):
        return None, "not_an_object", f"valid JSON but {describe(obj)}, not an object"
    return obj, None, None


def json_type(v: Any) -> str:
    """The JSON type name of a parsed value: null, boolean, number, string, array, object."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int | float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"


def describe(v: Any) -> str:
    """'a string', 'an array', 'null', ...: the JSON type of a value, for messages."""
    t = json_type(v)
    if t == "null":
        return "null"
    return ("an " if t[0] in "aeiou" else "a ") + t
