"""Column buffers: Python lists per column of each lake table, turned into Arrow per block."""

from typing import Any

import pyarrow as pa

from transforms.schemas import TABLES


class ColumnBuffers:
    """One list per column for each table; `append` returns the new row's number."""

    def __init__(self, tables: tuple[str, ...] = tuple(TABLES)) -> None:
        self.cols: dict[str, dict[str, list[Any]]] = {
            t: {c: [] for c in TABLES[t].names} for t in tables}

    def append(self, table: str, **values: Any) -> int:
        cols = self.cols[table]
        for k, v in values.items():
            cols[k].append(v)
        return len(cols["day"]) - 1

    def rows(self, table: str) -> int:
        return len(self.cols[table]["day"])

    def to_arrow(self, table: str) -> pa.Table:
        """The buffered rows of `table` as an Arrow table of its declared schema."""
        schema = TABLES[table].schema
        cols = self.cols[table]
        lengths = {len(v) for v in cols.values()}
        if len(lengths) > 1:
            raise AssertionError(f"{table}: columns out of step: "
                                 f"{ {k: len(v) for k, v in cols.items()} }")
        return pa.table([pa.array(cols[f.name], type=f.type) for f in schema], schema=schema)
