"""Row buffers: the rows of each lake table, given by column name, turned into Arrow per block.

A normalizer adds a row with the adder of its table (`ColumnBuffers.adder`), naming every
column of the table's schema (transforms.contracts.schemas) as a keyword: a column the schema
does not declare, or one left out, is an error naming the table and the column. The adder
stores the row as a tuple in the schema's order, and `to_arrow` hands the tuples to pyarrow as
struct values in one call, so the hot loop never touches per-column lists. The rows of every
message of a transcript are appended as tuples in an order their normalizer declares by name
(`in_schema_order`), checked against the schema when it is imported: a call by keyword for
each of them would slow the ingest.
"""

from collections.abc import Callable
from types import CodeType
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


class ColumnError(TypeError):
    """A row named a column its table does not declare, or left one out."""


RowAdder = Callable[..., None]
"""Adds one row of a table: its columns by name, as keywords."""

_Factory = Callable[..., Any]
"""Makes an adder of a table for a list's append and the fixed columns."""


def _adder_factory(table: str, fixed: tuple[str, ...]) -> _Factory:
    """Makes, for a list's `append` and the values of the `fixed` columns, the adder of
    `table`'s rows: a function whose keyword-only parameters are the table's other columns, so
    that Python itself refuses an unknown or missing column (named in the error), and whose
    body appends the row's tuple in the schema's order."""
    names = TABLES[table].names
    unknown = [n for n in fixed if n not in names]
    if unknown:
        raise ColumnError(f"the row of {table} has no column {unknown[0]!r} (its columns: "
                          f"{', '.join(names)})")
    given = ", ".join(n for n in names if n not in fixed)
    source = (f"def make(append{''.join(', ' + n for n in fixed)}):\n"
              f"    def add(*, {given}):\n"
              f"        append(({', '.join(names)},))\n"
              f"    return add\n")
    namespace: dict[str, Any] = {}
    exec(compile(source, f"<columns of {table}>", "exec"), namespace)  # noqa: S102
    make: _Factory = namespace["make"]
    # Python names the function in its errors: "the row of runs() got an unexpected keyword
    # argument 'x'", not "make.<locals>.add()".
    make.__code__ = _named(make.__code__, f"the row of {table}")
    return make


def _named(code: CodeType, name: str) -> CodeType:
    """`code` whose nested functions are named `name` in Python's errors."""
    return code.replace(co_consts=tuple(
        _named(c, name).replace(co_qualname=name) if isinstance(c, CodeType) else c
        for c in code.co_consts))


_FACTORIES: dict[tuple[str, tuple[str, ...]], _Factory] = {}


def _explained(table: str, e: TypeError) -> ColumnError:
    """A clear error for a row of `table` that named an unknown column or left one out."""
    names = TABLES[table].names
    return ColumnError(f"{e} (its columns: {', '.join(names)})")


def in_schema_order(table: str, names: tuple[str, ...]) -> tuple[str, ...]:
    """`names` when they are `table`'s columns in its schema's order, else a ColumnError naming
    the unknown, missing or misplaced column. For the rows a normalizer adds for every message
    of a transcript, whose keyword calls measurably slow an ingest: it appends their tuples to
    `rows_of` in the order it declares here by name, checked once, when it is imported."""
    schema = TABLES[table].names
    unknown = [n for n in names if n not in schema]
    missing = [n for n in schema if n not in names]
    if unknown or missing:
        what = f"no column {unknown[0]!r}" if unknown else f"column {missing[0]!r} left out"
        raise ColumnError(f"the row of {table}: {what} (its columns: {', '.join(schema)})")
    for given, declared in zip(names, schema, strict=True):
        if given != declared:
            raise ColumnError(f"the row of {table}: {given!r} where the schema has "
                              f"{declared!r} (its columns: {', '.join(schema)})")
    return names


class ColumnBuffers:
    """Rows per table, in the column order of transforms.contracts.schemas."""

    def __init__(self, tables: tuple[str, ...] = tuple(TABLES)) -> None:
        self.rows_of: dict[str, list[Any]] = {t: [] for t in tables}

    def adder(self, table: str, **fixed: Any) -> RowAdder:
        """The function that adds a row of `table`, given its columns by name (keywords):
        made once, and called for every row. `fixed` gives columns every row it adds shares
        (the source file), so that each call names only the others. An unknown or missing
        column raises a TypeError naming the table's row and the column."""
        return self._factory(table, tuple(fixed))(self.rows_of[table].append, **fixed)

    @staticmethod
    def _factory(table: str, fixed: tuple[str, ...]) -> _Factory:
        key = (table, fixed)
        make = _FACTORIES.get(key)
        if make is None:
            make = _FACTORIES[key] = _adder_factory(table, fixed)
        return make

    def append(self, table: str, **values: Any) -> int:
        """Add a row by column name (for rare rows: hot paths call `adder` once and keep it);
        a ColumnError names an unknown or missing column."""
        rows = self.rows_of[table]
        try:
            self.adder(table)(**values)
        except TypeError as e:
            raise _explained(table, e) from None
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
            if widths != [len(schema)]:  # a tuple appended to rows_of without its adder
                raise AssertionError(f"{table}: rows of {widths} values, schema has "
                                     f"{len(schema)}") from None
            raise
        return pa.Table.from_struct_array(struct)  # the schema the struct type was made of
