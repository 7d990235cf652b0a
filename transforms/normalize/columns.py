"""Row buffers: one tuple per row for each lake table, turned into Arrow columns per block.

Appending a tuple is one C call per row; `to_arrow` hands the tuples to pyarrow as struct
values in one call, so the hot loop never touches per-column lists.
"""

from typing import Any

import pyarrow as pa

from transforms.contracts.schemas import TABLES

INT64_MAX = 2**63 - 1
"""The largest value of a BIGINT column; readers keep larger integers out of their rows."""

MAX_RUNTIME_MS = 31 * 24 * 3600 * 1000
"""The longest runtime a run may report (31 days): a larger one is an impossible magnitude
(1e300 ms), nulled and flagged, so that no percentile becomes it."""

MAX_CALL_PRICE_USD = 10_000.0
"""The largest price one LLM call may report: a larger one (or a negative, NaN or infinite
one) is nulled and flagged, so that no run's cost becomes it."""


def valid_price(value: object) -> float | None:
    """A call's price as a float when it is a finite number from 0 to MAX_CALL_PRICE_USD;
    None otherwise (the caller flags a value that is present and not valid)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        f = float(value)
        if 0 <= f <= MAX_CALL_PRICE_USD:  # false for NaN
            return f
    return None


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
        try:
            # pyarrow reads the tuples as structs and checks, as it goes, that every row has
            # the schema's width: a third faster than transposing them with zip first.
            struct = pa.array(rows, type=pa.struct(list(schema)))
        except pa.ArrowInvalid:
            widths = sorted({len(r) for r in rows})
            if widths != [len(schema)]:
                raise AssertionError(f"{table}: rows of {widths} values, schema has "
                                     f"{len(schema)}") from None
            raise
        return pa.Table.from_struct_array(struct)  # the schema the struct type was made of
