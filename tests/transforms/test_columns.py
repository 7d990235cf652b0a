"""Rows are added by column name, from the table's schema (or, for a transcript's rows, in an
order declared by name): an unknown, missing or misplaced column is an error naming the table
and the column."""

from datetime import date

import pytest

from transforms.contracts.schemas import TABLES
from transforms.normalize.columns import ColumnBuffers, ColumnError, in_schema_order

DAY = date(2026, 11, 20)
THINKING = {"run_id": "r-1", "day": DAY, "message_index": 2, "block_index": 0, "text": "hm",
            "chars": 2, "span_id": None, "source_file": "a.responses.jsonl", "source_line": 7}


def test_a_row_by_name_is_stored_in_the_schema_order() -> None:
    buffers = ColumnBuffers()
    add = buffers.adder("thinking")
    add(**dict(reversed(list(THINKING.items()))))
    assert buffers.rows_of["thinking"] == [tuple(THINKING[n] for n in TABLES["thinking"].names)]
    assert buffers.to_arrow("thinking").to_pylist() == [THINKING]


def test_fixed_columns_are_given_once() -> None:
    buffers = ColumnBuffers()
    add = buffers.adder("thinking", source_file="a.responses.jsonl", span_id=None)
    add(run_id="r-1", day=DAY, message_index=2, block_index=0, text="hm", chars=2,
        source_line=7)
    assert buffers.to_arrow("thinking").to_pylist() == [THINKING]


def test_an_order_declared_by_name_is_checked_against_the_schema() -> None:
    """The rows appended as tuples (a transcript's) declare their order by name."""
    names = tuple(TABLES["thinking"].names)
    assert in_schema_order("thinking", names) == names
    with pytest.raises(ColumnError, match="no column 'txt'"):
        in_schema_order("thinking", tuple("txt" if n == "text" else n for n in names))
    with pytest.raises(ColumnError, match="column 'chars' left out"):
        in_schema_order("thinking", tuple(n for n in names if n != "chars"))
    with pytest.raises(ColumnError, match="'day' where the schema has 'run_id'"):
        in_schema_order("thinking", (names[1], names[0], *names[2:]))


def test_an_unknown_or_missing_column_is_named() -> None:
    buffers = ColumnBuffers()
    with pytest.raises(TypeError, match="the row of thinking.*'txt'"):
        buffers.adder("thinking")(**{**THINKING, "txt": "x"})
    with pytest.raises(TypeError, match="the row of thinking.*missing.*'chars'"):
        buffers.adder("thinking")(**{k: v for k, v in THINKING.items() if k != "chars"})
    with pytest.raises(ColumnError, match="thinking has no column 'txt'"):
        buffers.adder("thinking", txt="x")
    with pytest.raises(ColumnError, match="'txt'.*its columns: run_id, day"):
        buffers.append("thinking", **{**THINKING, "txt": "x"})
    assert buffers.rows("thinking") == 0
