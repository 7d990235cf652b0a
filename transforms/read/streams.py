"""Opening stored input files and reading them through their compression: every byte hashed
as it passes, a damaged or cut .gz or .zst stream raised as an error with its reason (a zstd
stream's frame layout followed without decompressing, so a file cut inside a frame is told
from a whole one)."""

import errno
import hashlib
import io
import os
import stat
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

READ_BYTES = 1024 * 1024
NOT_REGULAR = "not a regular file"


def open_regular(path: Path) -> IO[bytes]:
    """`path` opened for reading when it is a regular file; anything else (a FIFO, which a
    plain open would wait on forever, put in a file's place) is refused with an OSError. A
    file in a bucket (transforms.read.remote.S3Path) is opened as a stream of range requests."""
    from transforms.read import remote

    if remote.is_s3(path):
        return remote.open_remote(path)  # type: ignore[arg-type]

    def nonblocking(name: str, flags: int) -> int:
        return os.open(name, flags | os.O_NONBLOCK)

    f = open(path, "rb", opener=nonblocking)  # noqa: SIM115 - returned open
    try:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise OSError(errno.EINVAL, NOT_REGULAR, str(path))
        os.set_blocking(f.fileno(), True)
    except BaseException:
        f.close()
        raise
    return f


HASH_PIECE = 16 * 1024 * 1024
"""A file's digest is taken over pieces of this many stored bytes, so that the workers of an
ingest can each hash the pieces they read."""


def combine(pieces: list[bytes]) -> str:
    """The digest of a file from the SHA-256 digests of its pieces, in order: for a file of
    one piece (up to 16 MiB) the SHA-256 of its bytes; for a larger one the SHA-256 of its
    pieces' digests one after the other."""
    if not pieces:
        return hashlib.sha256().hexdigest()
    if len(pieces) == 1:
        return pieces[0].hex()
    return hashlib.sha256(b"".join(pieces)).hexdigest()


class PieceHasher:
    """Hashes a stream piece by piece (HASH_PIECE bytes each); `hexdigest` combines them."""

    def __init__(self) -> None:
        self._pieces: list[bytes] = []
        self._current = hashlib.sha256()
        self._filled = 0

    def update(self, data: memoryview | bytes) -> None:
        view = memoryview(data)
        while len(view):
            k = min(len(view), HASH_PIECE - self._filled)
            self._current.update(view[:k])
            self._filled += k
            view = view[k:]
            if self._filled == HASH_PIECE:
                self._pieces.append(self._current.digest())
                self._current, self._filled = hashlib.sha256(), 0

    def hexdigest(self) -> str:
        tail = [self._current.digest()] if self._filled or not self._pieces else []
        return combine(self._pieces + tail)


class HashingReader(io.RawIOBase):
    """Reads a file and hashes every byte that passes, so the stored file is read once."""

    def __init__(self, raw: IO[bytes]) -> None:
        self._raw = raw
        self.sha256 = PieceHasher()
        self.bytes_read = 0
        self.watch: Callable[[memoryview], None] | None = None
        """Also shown every byte that passes (the zstd frame layout follows them)."""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        n = self._raw.readinto(buffer)  # type: ignore[attr-defined]
        if n:
            view = memoryview(buffer)[:n]
            self.sha256.update(view)
            self.bytes_read += n
            if self.watch is not None:
                self.watch(view)
        return n or 0

    def close(self) -> None:
        self._raw.close()
        super().close()


def file_sha256(path: Path) -> str:
    """The file's digest (`combine`)."""
    h = PieceHasher()
    with open_regular(path) as f:
        while chunk := f.read(4 * 1024 * 1024):
            h.update(chunk)
    return h.hexdigest()


ZSTD_MAGIC = 0xFD2FB528
SKIPPABLE_MAGIC = 0x184D2A50
"""Skippable frames have magic 0x184D2A50 to 0x184D2A5F."""
ZSTD_BLOCK = 128 * 1024
"""The most a zstd block holds once decompressed."""


class ZstdFrames:
    """Follows the frame layout of a zstd stream (RFC 8878 §3.1) as its stored bytes pass,
    without decompressing: frame headers and block headers are read, block contents skipped.
    Tells whether the stream ends between frames, as gzip tells a stream that ends before
    its end-of-stream marker."""

    def __init__(self) -> None:
        self._state = "magic"
        self._need = 4
        self._head = b""
        self._skip = 0
        self._checksum = False
        self.offset = 0
        self.foreign_at: int | None = None
        """Offset of bytes that begin no zstd frame, if any were met."""

    @property
    def between_frames(self) -> bool:
        return self._state == "magic" and not self._head and not self._skip

    def feed(self, data: memoryview) -> None:
        i, n = 0, len(data)
        while i < n and self.foreign_at is None:
            if self._skip:
                k = min(self._skip, n - i)
                self._skip -= k
                i += k
                continue
            k = min(self._need - len(self._head), n - i)
            self._head += bytes(data[i:i + k])
            i += k
            if len(self._head) == self._need:
                self._header(int.from_bytes(self._head, "little"), self.offset + i)
                self._head = b""
        self.offset += n

    def _header(self, v: int, end: int) -> None:
        state = self._state
        if state == "magic":
            if v == ZSTD_MAGIC:
                self._state, self._need = "descriptor", 1
            elif v & 0xFFFFFFF0 == SKIPPABLE_MAGIC:
                self._state, self._need = "skippable", 4
            else:
                self.foreign_at = end - 4
        elif state == "skippable":
            self._skip = v
            self._state, self._need = "magic", 4
        elif state == "descriptor":
            single = (v >> 5) & 1
            self._checksum = bool(v & 4)
            self._skip = (0 if single else 1) + (0, 1, 2, 4)[v & 3] \
                + ((1 if single else 0), 2, 4, 8)[v >> 6]
            self._state, self._need = "block", 3
        else:  # a block header: last-block bit, type (1: one byte repeated), size
            self._skip = 1 if (v >> 1) & 3 == 1 else v >> 3
            if v & 1:
                self._skip += 4 if self._checksum else 0
                self._state, self._need = "magic", 4


class ZstdStream:
    """A zstd file read across its frames, which, like a gzip file, raises EOFError when the
    file ends inside a frame (zstandard's own reader returns what it has and stops)."""

    def __init__(self, hasher: HashingReader, buffered: IO[bytes]) -> None:
        import zstandard

        self._frames = ZstdFrames()
        hasher.watch = self._frames.feed
        self._buffered = buffered
        self._reader = zstandard.ZstdDecompressor().stream_reader(
            buffered, read_across_frames=True)

    def read1(self, size: int) -> bytes:
        # At most a block's worth at a time: what a call decompressed is lost when it meets
        # a damaged block, so the lines before the damage are kept to within one block.
        return self._checked(self._reader.read1(min(size, ZSTD_BLOCK)))

    def read(self, size: int) -> bytes:
        return self._checked(self._reader.read(size))

    def _checked(self, data: bytes) -> bytes:
        if data:
            return data
        while self._buffered.read(READ_BYTES):  # what the decompressor left, if anything
            pass
        if self._frames.foreign_at is not None:
            raise ValueError(f"not zstd data at byte {self._frames.foreign_at:,}")
        if not self._frames.between_frames:
            raise EOFError("Compressed file ended before the end-of-frame marker was reached")
        return data


def stream_errors(compression: str) -> tuple[type[BaseException], ...]:
    """What reading a stored file can raise when it is damaged or cut, or its disk fails."""
    errors: tuple[type[BaseException], ...] = (OSError, EOFError, ValueError, zlib.error)
    if compression == "zstd":
        import zstandard

        errors += (zstandard.ZstdError,)
    return errors


def reason(e: BaseException) -> str:
    """Why a read stopped, as `ingest_files.error` and `runlake validate` say it."""
    name = "zlib.error" if isinstance(e, zlib.error) else type(e).__name__
    return f"{name}: {e}"
