"""The lock that makes commit sequences on one home take turns (Lake.committing): a file lock
on a local folder; on object storage an object created only if it is not there (a
conditional put), which a writer that died leaves behind until WRITER_LEASE_SECONDS have
passed, or at once when it ran on this machine."""

import contextlib
import fcntl
import json
import os
import random
import socket
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

WRITER_LEASE_SECONDS = 3600.0
"""How long the lock of a writer on another machine holds before another may take it."""


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
    """The object `key` created for as long as the block runs, waited for while another
    writer holds it (taken over when that writer died: `abandoned`)."""
    me = json.dumps({"host": socket.gethostname(), "pid": os.getpid(),
                     "id": uuid.uuid4().hex, "at": time.time()}).encode()
    wait = 0.05
    while True:
        try:
            fs.pipe_file(key, me, mode="create")
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
    try:
        yield
    finally:
        with contextlib.suppress(FileNotFoundError):
            if bytes(fs.cat_file(key)) == me:
                fs.rm(key)


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
