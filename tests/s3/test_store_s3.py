"""The lake's Store answers alike on a local folder and on a bucket: what the lake's modules
ask of it (sizes of every file, a folder's listing, a move) without knowing which it is."""

from pathlib import Path

import pytest

from transforms.lake.store import Store, locate


@pytest.fixture(params=["local", "bucket"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    home = str(tmp_path / "home") if request.param == "local" \
        else request.getfixturevalue("s3_home")
    return locate(home).lake()


def test_a_store_answers_alike_on_a_folder_and_a_bucket(store: Store) -> None:
    assert dict(store.tree_sizes()) == {}
    store.write_bytes(b"abc", "runs", "month=2026-11", "part-1.parquet")
    store.write_bytes(b"", "runs", "_delta_log", "00000000000000000000.json")
    store.write_bytes(b"12345", "_lines", "runs", "month=2026-11", "part-2.parquet")

    sizes = store.tree_sizes()
    assert sizes.get("runs/month=2026-11/part-1.parquet") == 3
    assert sizes.get("_lines/runs/month=2026-11/part-2.parquet") == 5
    assert sizes.get("runs/_delta_log/00000000000000000000.json") == 0
    assert sizes.get("runs/month=2026-11/gone.parquet") is None
    assert sorted(sizes) == ["_lines/runs/month=2026-11/part-2.parquet",
                             "runs/_delta_log/00000000000000000000.json",
                             "runs/month=2026-11/part-1.parquet"]
    assert list(store.listing("runs", "_delta_log")) == ["00000000000000000000.json"]
    with pytest.raises(FileNotFoundError):
        store.listing("nothing", "_delta_log")

    store.move(("runs",), (".damaged", "runs-1"))
    assert not store.exists("runs", "month=2026-11", "part-1.parquet")
    assert store.read_bytes(".damaged", "runs-1", "month=2026-11", "part-1.parquet") == b"abc"
    assert store.tree_sizes().get(".damaged/runs-1/_delta_log/00000000000000000000.json") == 0
    assert store.renames is not store.remote
