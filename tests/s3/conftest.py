"""A real S3 API for the object-storage tests: moto's server in a child process bound to
127.0.0.1 (in this process it would share the GIL with delta-rs, which holds it while it
waits for the server), one bucket, the standard AWS_* variables set for the session, and a
fresh s3:// home per test."""

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

SERVER = """
import logging, sys
from moto.server import ThreadedMotoServer
logging.getLogger("werkzeug").setLevel(logging.ERROR)
server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
server.start()
print(server.get_host_and_port()[1], flush=True)
sys.stdin.read()  # until the parent closes it (or dies)
server.stop()
"""

BUCKET = "runlake-test"
HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every object-storage test is slow (an S3 server in a process of its own, and delta-rs
    over HTTP): `make test-fast` leaves them out."""
    for item in items:
        if item.path.is_relative_to(HERE):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    """The endpoint of a moto S3 server with the bucket `runlake-test`; AWS_* set for it."""
    proc = subprocess.Popen([sys.executable, "-c", SERVER], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
        url = f"http://127.0.0.1:{port}"
        env = {"AWS_ENDPOINT_URL": url, "AWS_ACCESS_KEY_ID": "testing",
               "AWS_SECRET_ACCESS_KEY": "testing", "AWS_REGION": "us-east-1",
               "AWS_ALLOW_HTTP": "true"}
        before = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        import boto3

        boto3.client("s3", endpoint_url=url, region_name="us-east-1",
                     aws_access_key_id="testing",
                     aws_secret_access_key="testing").create_bucket(Bucket=BUCKET)
        yield url
        for k, v in before.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture
def s3_home(s3_endpoint: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A fresh s3:// home; its warehouse file under a cache folder of this test's own."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return f"s3://{BUCKET}/homes/{uuid.uuid4().hex[:12]}"
