"""kill -9 in the middle of an ingest into a bucket, then the same ingest again: the lake
equals a clean ingest of the same files (as tests/transforms/test_lake_crash.py locally)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.transforms.test_lake import table_digests
from tests.transforms.test_lake_crash import CHILD, clean_ingest_digests, landing_files
from transforms.ingest import ingest


@pytest.fixture(scope="module")
def clean_digests(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A clean local ingest of the same files, made once for both stages."""
    return clean_ingest_digests(tmp_path_factory.mktemp("clean"))


STAGES = [
    ("Lake", "commit_table", 5),     # half of the tables committed
    ("Lake", "commit_manifest", 1),   # the manifest committed, nothing published
]


@pytest.mark.parametrize("owner,name,n", STAGES, ids=[f"{o}.{n}#{i}" for o, n, i in STAGES])
def test_kill_mid_commit_then_rerun(s3_home: str, tmp_path: Path, owner: str, name: str,
                                    n: int, clean_digests: dict[str, str]) -> None:
    landing = tmp_path / "landing"
    ingest(landing_files(landing, 1), s3_home, workers=1)
    files = landing_files(landing, 2)
    # The child takes the home as written (an s3:// URL, not a path).
    child_code = CHILD.replace("Path(sys.argv[4])", "sys.argv[4]")
    child = subprocess.run(
        [sys.executable, "-c", child_code, owner, name, str(n), s3_home, *map(str, files)],
        capture_output=True, timeout=300, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert child.returncode == -9, child.stderr.decode()[-2000:]
    ingest(files, s3_home, workers=1)
    assert table_digests(s3_home, landing=str(landing)) == clean_digests
