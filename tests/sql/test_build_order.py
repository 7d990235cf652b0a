"""The SQL build order comes from what each file reads or calls (parsed, not matched as text)."""

import json
from pathlib import Path

import pytest

from transforms.errors import WarehouseError
from transforms.warehouse.sqlfiles import LAYERS, build_order, references, sql_files


def test_every_file_comes_after_what_it_names() -> None:
    files = sql_files()
    position = {f.stem: i for i, f in enumerate(files)}
    layer = {f.stem: LAYERS.index(f.parent.name) for f in files}
    assert [layer[f.stem] for f in files] == sorted(layer[f.stem] for f in files)
    for f in files:
        name, refs = references(f)
        assert name == f.stem
        for r in refs & position.keys():
            assert position[r] < position[f.stem], (f.name, r)


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path


def test_a_name_in_a_comment_or_string_is_not_a_reference(tmp_path: Path) -> None:
    """The old text match took any word equal to a file name as a dependency."""
    root = _tree(tmp_path, {
        "marts/b.sql": "-- reads a\ncreate view b as select 'a' as x from a",
        "marts/a.sql": "-- not from b\ncreate view a as select 'b' as y",
    })
    assert [f.stem for f in sql_files(root)] == ["a", "b"]


def test_a_cycle_and_a_later_layer_are_refused(tmp_path: Path) -> None:
    cycle = _tree(tmp_path / "cycle", {
        "marts/a.sql": "create view a as select * from b",
        "marts/b.sql": "create view b as select * from a",
    })
    with pytest.raises(WarehouseError, match="cycle: a, b"):
        sql_files(cycle)
    later = _tree(tmp_path / "later", {
        "intermediate/int_x.sql": "create view intermediate.int_x as select * from v_y",
        "marts/v_y.sql": "create view v_y as select 1 as one",
    })
    with pytest.raises(WarehouseError, match="int_x.sql names v_y, built in a later layer"):
        sql_files(later)
    misnamed = _tree(tmp_path / "misnamed", {"marts/v_z.sql": "create view v_q as select 1"})
    with pytest.raises(WarehouseError, match="creates v_q"):
        sql_files(misnamed)


def test_parsed_references_are_cached_by_text(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """An ingest does not parse the SQL again when no file changed; an edited file, a damaged
    cache or one that cannot be written changes nothing but the time taken."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = _tree(tmp_path / "sql", {
        "marts/a.sql": "create view a as select 1 as one",
        "marts/b.sql": "create view b as select * from a",
    })
    assert [f.stem for f in sql_files(root)] == ["a", "b"]
    cache = tmp_path / "cache" / "runlake" / "sql-references.json"
    assert len(json.loads(cache.read_text())) == 2
    # Edited so that a reads b: the new text is parsed, the order follows it.
    (root / "marts" / "a.sql").write_text("create view a as select * from b")
    (root / "marts" / "b.sql").write_text("create view b as select 1 as one")
    assert [f.stem for f in sql_files(root)] == ["b", "a"]
    cache.write_text("{not json")
    assert [f.stem for f in build_order(root)] == ["b", "a"]
    # Entries of the wrong shape are parsed again (and replaced).
    cache.write_text(json.dumps({k: ["b", 5] for k in json.loads(cache.read_text())}))
    assert [f.stem for f in build_order(root)] == ["b", "a"]
    # No cache can be written (the cache folder is a file): parsed every time, same order.
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    assert [f.stem for f in build_order(root)] == ["b", "a"]
    assert len(json.loads(cache.read_text())) == 2
    # A cached entry is what the parse gives.
    for f in (root / "marts").glob("*.sql"):
        name, refs = references(f)
        assert sorted(refs) in [v[1] for v in json.loads(cache.read_text()).values()]
        assert name in [v[0] for v in json.loads(cache.read_text()).values()]
