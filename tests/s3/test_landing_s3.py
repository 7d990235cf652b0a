"""Landing files in a bucket: `runlake ingest s3://bucket/landing/` reads them streamed, with
the same lines, quarantine and digests as the same files on a local folder (a .gz and a .zst
among them), and the Dagster sensor's landing listing finds them by day."""

import gzip
import shutil
from pathlib import Path

import zstandard
from typer.testing import CliRunner

from pipelines.automation import scan_landing
from pipelines.resources import RunlakeResource
from tests.conftest import REPO
from tests.s3.conftest import BUCKET
from tests.transforms.test_lake import table_digests
from transforms.cli import app
from transforms.ingest import ingest
from transforms.lake import Lake
from transforms.objectstore import filesystem
from transforms.read.landing import files_by_day

SAMPLES = REPO / "data_samples"


def _landing(tmp_path: Path) -> Path:
    """Two sample days, one file gzip- and one zstd-compressed, a line of garbage added."""
    days = sorted(p for p in SAMPLES.iterdir() if p.is_dir())[-2:]
    landing = tmp_path / "landing"
    for d in days:
        shutil.copytree(d, landing / d.name)
    files = sorted(f for f in landing.rglob("*.jsonl"))
    gz, zst = files[0], files[-1]
    with open(gz, "ab") as fh:
        fh.write(b"{not json\n")
    gz.with_name(gz.name + ".gz").write_bytes(gzip.compress(gz.read_bytes()))
    gz.unlink()
    zst.with_name(zst.name + ".zst").write_bytes(
        zstandard.ZstdCompressor().compress(zst.read_bytes()))
    zst.unlink()
    return landing


def _digests_without_names(home: Path | str, prefix: str) -> dict[str, str]:
    """table_digests with each row's file named relative to its landing folder."""
    return table_digests(home, prefix)


def test_landing_in_a_bucket_reads_as_local(s3_home: str, tmp_path: Path) -> None:
    landing = _landing(tmp_path)
    remote = f"s3://{BUCKET}/landing-{Path(s3_home).name}"
    filesystem().put(str(landing), remote.removeprefix("s3://"), recursive=True)
    local_home = tmp_path / "local"
    ingest([landing], local_home, workers=2, block_bytes=64 * 1024)
    # The sensor watching the prefix: both days are new.
    sensor = RunlakeResource(home=s3_home, landing=remote)
    assert sorted(r.partition_key for r in scan_landing(sensor, None).requests) == \
        sorted(d.name for d in landing.iterdir())
    code = CliRunner().invoke(app, ["ingest", remote + "/", "--home", s3_home,
                                    "--workers", "2"])
    assert code.exit_code == 0, code.output
    local, there = Lake(local_home).known_files(), Lake(s3_home).known_files()
    as_local = {k.replace(remote, str(landing.resolve())): v for k, v in there.items()}
    assert as_local == local  # the same files, digests, sizes, kinds and errors
    assert any(k.endswith(".gz") for k in there) and any(k.endswith(".zst") for k in there)
    assert _digests_without_names(s3_home, remote) == \
        _digests_without_names(local_home, str(landing.resolve()))
    scan = scan_landing(sensor, None)
    assert scan.requests == []  # all ingested, unchanged
    by_day = files_by_day(remote)
    assert sorted(by_day) == sorted(files_by_day(landing))
    assert all(f.source_file.startswith(remote) for fs in by_day.values() for f in fs)
