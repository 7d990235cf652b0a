"""The receiver's landing files: `DIR/<UTC day>/otlp-<opened>-<pid>-<n>.otlp.jsonl`.

A file is written under a hidden temporary name (`.otlp-….otlp.jsonl.part`, which a folder walk
passes over: neither the landing sensor nor an ingest reads it) and renamed to its final name
when it is closed: once it holds `max_bytes`, `max_seconds` after it was opened, at UTC midnight,
and when the receiver stops. `append` returns once the lines are on disk (written and fsync'd,
and the folder entry of a new file too): what it returned for survives a crash. A receiver that
starts again first closes the files a killed one left open, cutting a last line that was being
written when it died (never acknowledged, so its sender sends it again).

WriteQueue holds the lines received and not yet written, bounded in bytes, for one writer
thread that writes all that is queued and fsyncs once (a group commit).

One receiver writes a landing folder at a time: it holds `DIR/.receiver.lock` (flock), so the
files it finds open at start are never another live receiver's. No part of a request reaches a
path: names are made of the clock, the process id and a counter.
"""

import contextlib
import fcntl
import os
import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import BinaryIO

from transforms.errors import InputError

PART = ".part"
SUFFIX = ".otlp.jsonl"
LOCK = ".receiver.lock"


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class LandingFiles:
    """The open landing file of a receiver and the rules for closing it. Not thread-safe: the
    receiver's one writer thread calls it."""

    def __init__(self, root: Path, max_bytes: int, max_seconds: float) -> None:
        self.root = root
        self.max_bytes = max_bytes
        self.max_seconds = max_seconds
        self.closed: list[Path] = []
        """The files closed so far, in order."""
        self._lock_fd: int | None = None
        self._fd: int | None = None
        self._path: Path | None = None
        self._day: date | None = None
        self._opened = 0.0
        self._size = 0
        self._n = 0

    def start(self) -> list[Path]:
        """Take the landing folder (InputError when another receiver holds it) and close the
        files a killed receiver left open; returns those files under their final names."""
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise InputError(f"--landing {self.root}: cannot create the folder: "
                             f"{e.strerror or e}") from None
        if not self.root.is_dir():
            raise InputError(f"--landing {self.root}: not a folder")
        fd = os.open(self.root / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            holder = (self.root / LOCK).read_text().strip() or "?"
            raise InputError(f"another runlake serve (pid {holder}) writes to {self.root}: one "
                             "receiver per landing folder") from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._lock_fd = fd
        return self.recover()

    def recover(self) -> list[Path]:
        """Close (rename) every temporary file under the landing folder's day folders, cut
        after its last complete line; an empty one is removed."""
        done = []
        for part in sorted(self.root.glob(f"*/.otlp-*{SUFFIX}{PART}")):
            with open(part, "r+b") as f:
                keep = _complete_lines(f)
                if keep < os.fstat(f.fileno()).st_size:
                    f.truncate(keep)
                    os.fsync(f.fileno())
            if keep == 0:
                part.unlink()
            else:
                done.append(self._rename(part))
            _fsync_dir(part.parent)
        return done

    def append(self, data: bytes | list[bytes], now: float | None = None) -> None:
        """Write `data` (whole lines, or a list of them: written one after the other, not
        joined into a copy) to the open file, opening one first when none is, and return once
        it is on disk."""
        now = time.time() if now is None else now
        self.rotate(now)
        if self._fd is None:
            self._open(now)
        assert self._fd is not None
        pieces = [data] if isinstance(data, bytes) else data
        try:
            for piece in pieces:
                view = memoryview(piece)
                while view:
                    n = os.write(self._fd, view)
                    view = view[n:]
            os.fsync(self._fd)
        except OSError:
            # A full disk: what was written of these lines goes, so the file holds whole
            # lines only (none of them was acknowledged).
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, self._size)
            raise
        self._size += sum(len(p) for p in pieces)
        if self._size >= self.max_bytes:
            self.close()

    def rotate(self, now: float | None = None) -> None:
        """Close the open file when it is older than max_seconds or of an earlier UTC day."""
        if self._fd is None:
            return
        now = time.time() if now is None else now
        if now - self._opened >= self.max_seconds or _day(now) != self._day:
            self.close()

    def close(self) -> None:
        """Close the open file under its final name (nothing when none is open); a file that
        holds no line (every write to it failed: a full disk) is removed instead."""
        if self._fd is None or self._path is None:
            return
        os.close(self._fd)
        self._fd = None
        if self._size == 0:
            with contextlib.suppress(OSError):
                self._path.unlink()
                _fsync_dir(self._path.parent)
            self._path = None
            return
        final = self._rename(self._path)
        _fsync_dir(final.parent)
        self.closed.append(final)
        self._path = None

    def stop(self) -> None:
        """Close the open file and let go of the landing folder."""
        self.close()
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def _open(self, now: float) -> None:
        day = _day(now)
        folder = self.root / day.isoformat()
        folder.mkdir(exist_ok=True)
        self._n += 1
        stamp = datetime.fromtimestamp(now, UTC).strftime("%Y%m%dT%H%M%S")
        path = folder / f".otlp-{stamp}-{os.getpid()}-{self._n:05d}{SUFFIX}{PART}"
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o644)
        _fsync_dir(folder)  # the new file's entry survives a crash too
        self._path, self._day, self._opened, self._size = path, day, now, 0

    @staticmethod
    def _rename(part: Path) -> Path:
        """`part`'s final name (the leading dot and .part dropped), made unique."""
        base = part.name[1:-len(PART)]
        final = part.with_name(base)
        n = 1
        while final.exists():
            final = part.with_name(f"{base[:-len(SUFFIX)]}-{n}{SUFFIX}")
            n += 1
        os.rename(part, final)
        return final


def _complete_lines(f: BinaryIO, block: int = 1 << 20) -> int:
    """The length of the file's complete lines: up to its last newline (read from the end)."""
    end = f.seek(0, os.SEEK_END)
    while end > 0:
        start = max(0, end - block)
        f.seek(start)
        at = f.read(end - start).rfind(b"\n")
        if at >= 0:
            return start + at + 1
        end = start
    return 0


def _day(now: float) -> date:
    return datetime.fromtimestamp(now, UTC).date()


@dataclass
class _Ticket:
    data: bytes
    done: threading.Event = field(default_factory=threading.Event)
    error: str | None = None


class WriteQueue:
    """Received lines waiting for the writer thread, bounded in bytes."""

    def __init__(self, files: LandingFiles, max_bytes: int) -> None:
        self.files = files
        self.max_bytes = max_bytes
        self.written_lines = 0
        self.written_bytes = 0
        self._items: list[_Ticket] = []
        self._queued = 0
        self._cond = threading.Condition()
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="runlake-writer", daemon=True)
        self._thread.start()

    def submit(self, data: bytes) -> _Ticket | None:
        """Queue `data`; None when the queue is full (a request larger than the bound is
        taken when the queue is empty) or the receiver is stopping."""
        with self._cond:
            if self._stopping or (self._items and self._queued + len(data) > self.max_bytes):
                return None
            ticket = _Ticket(data)
            self._items.append(ticket)
            self._queued += len(data)
            self._cond.notify()
            return ticket

    def _run(self) -> None:
        while True:
            with self._cond:
                if not self._items and not self._stopping:
                    self._cond.wait(timeout=1.0)
                batch, self._items, self._queued = self._items, [], 0
                stopping = self._stopping
            if batch:
                self._write(batch)
            else:
                self._rotate()
            if stopping and not batch:
                return

    def _write(self, batch: list[_Ticket]) -> None:
        try:
            self.files.append([t.data for t in batch])
            self.written_lines += len(batch)
            self.written_bytes += sum(len(t.data) for t in batch)
        except OSError as e:
            for t in batch:
                t.error = f"the landing file could not be written: {e.strerror or e}"
            with contextlib.suppress(OSError):  # a file that failed a write is not reused
                self.files.close()
        for t in batch:
            t.done.set()

    def _rotate(self) -> None:
        try:
            self.files.rotate()
        except OSError as e:
            sys.stderr.write(f"warning: a landing file could not be closed: {e.strerror or e}\n")

    def stop(self) -> None:
        """Write what is queued, close the open file and end the writer thread."""
        with self._cond:
            self._stopping = True
            self._cond.notify()
        self._thread.join()
        self.files.stop()
