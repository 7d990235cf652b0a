"""Reading the models the derive stored in the lake (their headers' `-- stored:` tables): SQL
over a stored table's files at one version, and the builder's source for a lake version."""

import duckdb
import pyarrow as pa

from transforms.lake import WEEK, Lake, parquet_sql
from transforms.warehouse.builder import Source
from transforms.warehouse.models import Model


def stored_sql(lake: Lake, table: str, version: int, distinct: bool = False) -> str | None:
    """SQL reading a stored table at `version` (None when that lake version has none)."""
    if version < 0:
        return None
    files = lake.file_uris(table, version)
    if not files:
        cols = ", ".join(f'CAST(NULL AS {t}) AS "{n}"'
                         for n, t in column_types(lake, table, version) if n != WEEK)
        return f"SELECT {cols} WHERE false"
    return parquet_sql(files, distinct=distinct)


def is_lookup(lake: Lake, table: str, version: int) -> bool:
    """A stored table with no day to count its rows toward (stored whole in every week)."""
    return not {"run_day", "day", "run_id"} & lake.columns(table, version)


def version_source(lake: Lake, snapshot: dict[str, int], once: frozenset[str]) -> Source:
    """The builder's source over the lake version `snapshot`: a stored model reads its table
    at that version (a weekly lookup read distinct: each week holds it whole)."""

    def stored(m: Model) -> str | None:
        if m.stored is None:
            return None
        v = snapshot.get(m.stored, -1)
        lookup = v >= 0 and m.weekly and is_lookup(lake, m.stored, v)
        return stored_sql(lake, m.stored, v, distinct=lookup)

    return Source(stored, once)


def column_types(lake: Lake, table: str, version: int) -> list[tuple[str, str]]:
    """The columns of a lake table at `version` with their DuckDB types."""
    schema = pa.schema(lake.open(table, version).schema().to_arrow())
    rel = _types_connection().from_arrow(schema.empty_table())
    return [(n, str(t)) for n, t in zip(rel.columns, rel.types, strict=True)]


_TYPES: list[duckdb.DuckDBPyConnection] = []


def _types_connection() -> duckdb.DuckDBPyConnection:
    """One connection per process for asking DuckDB the type of an Arrow type."""
    if not _TYPES:
        _TYPES.append(duckdb.connect())
    return _TYPES[0]
