"""`runlake forget` on a bucket: a landing file read from the bucket, named by its s3:// URL,
leaves every table in one version, and ingesting it again restores the lake."""

import shutil
from pathlib import Path

from typer.testing import CliRunner

from tests.conftest import REPO
from tests.s3.conftest import BUCKET
from tests.transforms.test_lake import table_digests
from transforms.cli import app
from transforms.lake import Lake, history
from transforms.objectstore import filesystem

DAY = "2026-11-20"


def test_forget_a_bucket_file_and_ingest_it_again(s3_home: str, tmp_path: Path) -> None:
    landing = tmp_path / "landing"
    shutil.copytree(REPO / "data_samples" / DAY, landing / DAY)
    remote = f"s3://{BUCKET}/landing-{Path(s3_home).name}"
    filesystem().put(str(landing), remote.removeprefix("s3://"), recursive=True)
    cli = CliRunner()
    done = cli.invoke(app, ["ingest", remote + "/", "--home", s3_home, "--workers", "1"])
    assert done.exit_code == 0, done.output
    before = table_digests(s3_home)
    bad = f"{remote}/{DAY}/travel-agent.responses.jsonl"
    assert bad in Lake(s3_home).known_files()

    done = cli.invoke(app, ["forget", bad, "--home", s3_home])
    assert done.exit_code == 0, done.output
    assert f"forgot {bad}" in done.output
    assert bad not in Lake(s3_home).known_files()
    assert history(Lake(s3_home), 1)[0]["action"] == "forget"
    assert table_digests(s3_home) != before

    done = cli.invoke(app, ["ingest", remote + "/", "--home", s3_home, "--workers", "1"])
    assert done.exit_code == 0, done.output
    assert table_digests(s3_home) == before
