"""The writer lock of a lake on object storage (a real S3 API: the emulator): its holder renews
it while it commits, so a commit longer than the lease keeps it; a writer that stopped
renewing loses it once the lease has passed."""

import json
import threading
import time

import pytest

from tests.s3.conftest import BUCKET
from transforms.lake import locks
from transforms.objectstore import filesystem


@pytest.fixture
def short_lease(monkeypatch: pytest.MonkeyPatch) -> float:
    monkeypatch.setattr(locks, "WRITER_LEASE_SECONDS", 1.0)
    monkeypatch.setattr(locks, "RENEW_EVERY_SECONDS", 0.2, raising=False)
    return 1.0


def test_a_commit_longer_than_the_lease_keeps_the_lock(s3_endpoint: str,
                                                       short_lease: float) -> None:
    fs = filesystem()
    key = f"{BUCKET}/lease-{time.time_ns()}/_writer.lock"
    holding, released = threading.Event(), []

    def long_commit() -> None:
        with locks.bucket_lock(fs, key):
            holding.set()
            time.sleep(3 * short_lease)
            released.append(time.monotonic())

    first = threading.Thread(target=long_commit)
    first.start()
    assert holding.wait(30)
    with locks.bucket_lock(fs, key):
        taken = time.monotonic()
    first.join()
    # The second writer waited for the first to finish: three leases went by meanwhile.
    assert released and taken >= released[0]
    assert not fs.exists(key)


def test_a_lock_no_longer_renewed_is_taken_after_the_lease(s3_endpoint: str,
                                                           short_lease: float) -> None:
    fs = filesystem()
    key = f"{BUCKET}/lease-{time.time_ns()}/_writer.lock"
    fs.pipe_file(key, json.dumps({"host": "another-machine", "pid": 1, "id": "gone",
                                  "at": time.time()}).encode())
    start = time.monotonic()
    with locks.bucket_lock(fs, key):
        waited = time.monotonic() - start
        assert json.loads(bytes(fs.cat_file(key)))["id"] != "gone"
    assert short_lease * 0.9 <= waited < short_lease + 10
