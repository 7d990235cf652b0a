"""The lock that makes commit sequences on one home take turns (Lake.committing): a file lock
on a local folder; on object storage an object created only if it is not there (a
conditional put), which its holder renews while it commits, and which a writer that died
leaves behind until WRITER_LEASE_SECONDS have passed since its last renewal, or at once when
it ran on this machine."""

import contextlib
import fcntl
import json
import os
import random
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

WRITER_LEASE_SECONDS = 3600.0
"""How long the lock of a writer on another machine holds after its last renewal before
another may take it."""

RENEW_EVERY_SECONDS = WRITER_LEASE_SECONDS / 4
"""How often the holder of a bucket lock renews it: a commit that runs longer than the lease
keeps its lock, and a writer that died stops renewing."""


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """An exclusive lock of a local file (made when missing), waited for."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


@contextlib.contextmanager
def bucket_lock(fs: Any, key: str) -> Iterator[None]:
    """The object `key` created for as long as the block runs, and renewed meanwhile; waited
    for while another writer holds it (taken over when that writer died: `abandoned`)."""
    lock_id = uuid.uuid4().hex

    def stamp() -> bytes:
        return json.dumps({"host": socket.gethostname(), "pid": os.getpid(), "id": lock_id,
                           "at": time.time()}).encode()

    wait = 0.05
    while True:
        try:
            fs.pipe_file(key, stamp(), mode="create")
            break
        except FileExistsError:
            try:
                held = bytes(fs.cat_file(key))
            except FileNotFoundError:
                continue  # released meanwhile
            if abandoned(held) and bytes(fs.cat_file(key)) == held:
                with contextlib.suppress(FileNotFoundError):
                    fs.rm(key)
                continue
            time.sleep(wait * (0.5 + random.random()))
            wait = min(2.0, wait * 2)
    done = threading.Event()

    def renew() -> None:
        while not done.wait(RENEW_EVERY_SECONDS):
            with contextlib.suppress(Exception):  # a failed renewal: the next one tries again
                if _holder(fs, key) == lock_id:
                    fs.pipe_file(key, stamp())

    renewing = threading.Thread(target=renew, name="runlake-writer-lease", daemon=True)
    renewing.start()
    try:
        yield
    finally:
        done.set()
        renewing.join()
        with contextlib.suppress(FileNotFoundError):
            if _holder(fs, key) == lock_id:
                fs.rm(key)


def _holder(fs: Any, key: str) -> str | None:
    """The id of the writer whose lock `key` is (None: not a lock runlake wrote)."""
    try:
        owner = json.loads(bytes(fs.cat_file(key)))
        return str(owner["id"])
    except (ValueError, KeyError, TypeError):
        return None


def abandoned(held: bytes) -> bool:
    """A bucket lock left by a writer that died: one of this machine whose process is gone, or
    one older than WRITER_LEASE_SECONDS."""
    try:
        owner = json.loads(held)
        host, pid, at = owner["host"], int(owner["pid"]), float(owner["at"])
    except (ValueError, KeyError, TypeError):
        return True  # not a lock runlake wrote
    if time.time() - at > WRITER_LEASE_SECONDS:
        return True
    if host != socket.gethostname():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False
