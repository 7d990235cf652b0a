"""The SQL build order comes from what each file reads or calls (parsed, not matched as text)."""

from pathlib import Path

import pytest

from transforms.errors import WarehouseError
from transforms.warehouse.sqlfiles import LAYERS, references, sql_files


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
