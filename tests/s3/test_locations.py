"""Where an s3:// home keeps what, with no store needed: the URL is kept as written (no
pathlib `//` collapse), hostile URLs are refused, the warehouse file goes to a cache folder
of plain names, and a local home's layout is as before."""

from pathlib import Path

import pytest

from transforms import settings, warehouse
from transforms.lake.store import locate
from transforms.objectstore import cache_folder


def test_s3_urls_are_kept_and_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUNLAKE_HOME", "s3://my-bucket/team/lake-a/")
    monkeypatch.setenv("RUNLAKE_LANDING", "s3://my-bucket/landing")
    s = settings.load()
    assert s.home == "s3://my-bucket/team/lake-a" and s.landing == "s3://my-bucket/landing"
    assert settings.location("warehouse") == Path("warehouse")
    for bad in ("s3://my-bucket/a//b", "s3://my-bucket/../etc", "s3://my-bucket/a b",
                "s3://my-bucket/[x]", "s3://my-bucket/a*", "s3://My_Bucket/x", "s3://",
                "gs://bucket/x", "file:///etc", "s3://my-bucket/a'b"):
        with pytest.raises(ValueError):
            settings.location(bad)
    monkeypatch.setenv("RUNLAKE_HOME", "s3://my-bucket/a//b")
    with pytest.raises(settings.InputError, match="RUNLAKE_HOME"):
        settings.load()


def test_the_warehouse_of_an_s3_home_is_local(monkeypatch: pytest.MonkeyPatch,
                                              tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("RUNLAKE_WAREHOUSE", raising=False)
    url = "s3://my-bucket/team/x=1"
    where = locate(url)
    assert where.home == url and where.remote
    assert where.warehouse.parent.parent == tmp_path / "cache" / "runlake"
    assert where.warehouse.name == "warehouse.duckdb"
    assert where.reports == where.warehouse.parent / "reports"
    assert all(c.isalnum() or c in "._-" for c in where.warehouse.parent.name)
    assert cache_folder("s3://my-bucket/team/x") != cache_folder("s3://my-bucket/team-x")
    monkeypatch.setenv("RUNLAKE_WAREHOUSE", str(tmp_path / "w" / "mine.duckdb"))
    assert warehouse.path(url) == tmp_path / "w" / "mine.duckdb"


def test_a_local_home_is_laid_out_as_before(monkeypatch: pytest.MonkeyPatch,
                                            tmp_path: Path) -> None:
    monkeypatch.delenv("RUNLAKE_WAREHOUSE", raising=False)
    home = tmp_path / "home"
    where = locate(home)
    assert not where.remote and where.home == home.resolve()
    assert warehouse.path(home) == home.resolve() / "warehouse.duckdb"
    assert warehouse.reports(home) == home.resolve() / "reports"
    assert where.scratch == home.resolve() / ".scratch"
