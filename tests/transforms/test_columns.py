"""Rows are added by column name, from the table's schema: an unknown or missing column is an
error that names the table and the column."""

from datetime import date

import pytest

from transforms.contracts.schemas import TABLES
from transforms.normalize.columns import ColumnBuffers, ColumnError

DAY = date(2026, 11, 20)
THINKING = {"run_id": "r-1", "day": DAY, "message_index": 2, "block_index": 0, "text": "hm",
            "chars": 2, "span_id": None, "source_file": "a.responses.jsonl", "source_line": 7}


def test_a_row_by_name_is_stored_in_the_schema_order() -> None:
    buffers = ColumnBuffers()
    add = buffers.adder("thinking")
    add(**dict(reversed(list(THINKING.items()))))
    assert buffers.rows_of["thinking"] == [tuple(THINKING[n] for n in TABLES["thinking"].names)]
    assert buffers.to_arrow("thinking").to_pylist() == [THINKING]


def test_fixed_and_shared_columns_are_given_once() -> None:
    buffers = ColumnBuffers()
    bind = buffers.binder("thinking", ("run_id", "day", "span_id", "source_line"),
                          source_file="a.responses.jsonl")
    add = bind(run_id="r-1", day=DAY, span_id=None, source_line=7)
    add(message_index=2, block_index=0, text="hm", chars=2)
    assert buffers.to_arrow("thinking").to_pylist() == [THINKING]


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
