"""A lake written anew at the same s3:// URL (the prefix emptied, or the URL pointed at another
lake) is not served from the warehouse file cached for the old one, although its manifest
reaches the same version numbers."""

from pathlib import Path

from typer.testing import CliRunner

from transforms import warehouse
from transforms.cli import app
from transforms.ingest import ingest
from transforms.objectstore import filesystem

SAMPLES = Path(__file__).resolve().parents[2] / "data_samples"


def _days(home: str) -> list[str]:
    con = warehouse.connect(home)
    try:
        return [r[0] for r in con.execute(
            "SELECT DISTINCT day::VARCHAR FROM runs ORDER BY 1").fetchall()]
    finally:
        con.close()


def test_a_lake_written_anew_at_the_same_url_is_read_anew(s3_home: str) -> None:
    ingest([SAMPLES / "2026-11-19"], s3_home, workers=1)
    assert _days(s3_home) == ["2026-11-19"]
    version = warehouse.newest_log(s3_home)
    filesystem().rm(s3_home[len("s3://"):], recursive=True)
    ingest([SAMPLES / "2026-11-20"], s3_home, workers=1)
    assert warehouse.newest_log(s3_home) == version  # the same version number, another lake
    assert _days(s3_home) == ["2026-11-20"]
    res = CliRunner().invoke(app, ["sql", "select min(day)::VARCHAR as d from runs", "--home",
                                   s3_home, "--format", "json"])
    assert res.exit_code == 0 and "2026-11-20" in res.output, res.output
    res = CliRunner().invoke(app, ["doctor", "--home", s3_home])
    assert res.exit_code == 0 and "nothing to repair" in res.output, res.output
