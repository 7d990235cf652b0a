"""Row buffers: one tuple per row for each lake table, turned into Arrow columns per block.

Appending a tuple is one C call per row; `to_arrow` transposes the rows with `zip` and builds
each column in one pyarrow call, so the hot loop never touches per-column lists.
"""

from typing import Any

import pyarrow as pa

from transforms.contracts.schemas import TABLES

INT64_MAX = 2**63 - 1
"""The largest value of a BIGINT column; readers keep larger integers out of their rows."""


class ColumnBuffers:
    """Rows per table, in the column order of transforms.contracts.schemas."""

    def __init__(self, tables: tuple[str, ...] = tuple(TABLES)) -> None:
        self.rows_of: dict[str, list[Any]] = {t: [] for t in tables}

    def append(self, table: str, **values: Any) -> int:
        """Add a row by column name (for rare rows; hot paths append tuples to `rows_of`)."""
        rows = self.rows_of[table]
        rows.append(tuple(values[name] for name in TABLES[table].names))
        return len(rows) - 1

    def rows(self, table: str) -> int:
        return len(self.rows_of[table])

    def column(self, table: str, name: str) -> list[Any]:
        i = TABLES[table].names.index(name)
        return [r[i] for r in self.rows_of[table]]

    def to_arrow(self, table: str) -> pa.Table:
        """The buffered rows of `table` as an Arrow table of its declared schema."""
        schema = TABLES[table].schema
        rows = self.rows_of[table]
        width = len(schema)
        try:
            # zip(strict=True) checks, while transposing, that every row has the same width.
            cols = list(zip(*rows, strict=True)) if rows else [() for _ in schema]
        except ValueError:
            cols = []
        if len(cols) != width:
            widths = sorted({len(r) for r in rows})
            raise AssertionError(f"{table}: rows of {widths} values, schema has {width}")
        return pa.table([pa.array(c, type=f.type) for c, f in zip(cols, schema, strict=True)],
                        schema=schema)
