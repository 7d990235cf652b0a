"""The one builder of the warehouse's SQL models (transforms.warehouse.models): whatever a build
runs over (a lake version, a derive's window of days, Arrow tables in memory, a Spark or Trino
script), it makes each model as its header declares, from a `Source` that says where stored
rows are and which kinds are computed once as tables there.

`plan` says what to do for each model; `build` does it on a DuckDB connection; the Spark and
Trino script turns the same steps into its statements (transforms.warehouse.scripts).
"""

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from transforms.errors import WarehouseError
from transforms.warehouse.models import Model, models
from transforms.warehouse.sqlfiles import reads

SCHEMAS = ("staging", "intermediate", "checks")
"""The schemas of a warehouse besides the default one (public models)."""


def create_schemas(con: duckdb.DuckDBPyConnection, again: bool = False) -> None:
    """The SCHEMAS on `con`; with `again`, dropped first with all they hold."""
    for schema in SCHEMAS:
        if again:
            con.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        con.execute(f"CREATE SCHEMA {schema}")


def run_sql(con: duckdb.DuckDBPyConnection, f: Path) -> None:
    """Run a SQL file, its failure named by the file."""
    try:
        con.execute(f.read_text())
    except duckdb.Error as e:
        raise WarehouseError(f"sql/{f.parent.name}/{f.name}: {e}") from e


def computed_once(con: duckdb.DuckDBPyConnection, relation: str, suffix: str) -> None:
    """Compute `relation` (a view) once, as the table <relation>__<suffix>, and make the view
    read that table."""
    con.execute(f"CREATE TABLE {relation}__{suffix} AS SELECT * FROM {relation}")
    con.execute(f"CREATE OR REPLACE VIEW {relation} AS SELECT * FROM {relation}__{suffix}")


def _nothing_stored(model: Model) -> str | None:
    return None


@dataclass(frozen=True)
class Source:
    """What a build runs over: `stored` gives SQL reading a model's stored rows (None: compute
    it by its SQL); `once` is the kinds (`materialized:`) computed once as tables there,
    named <relation>__<suffix>."""

    stored: Callable[[Model], str | None] = _nothing_stored
    once: frozenset[str] = field(default_factory=frozenset)
    suffix: str = "computed"


IN_MEMORY = frozenset({"table"})
"""What an in-memory warehouse computes once: the `table` models."""
IN_WINDOW = frozenset({"table", "window_table"})
"""What a derive's window of days computes once."""


@dataclass(frozen=True)
class Step:
    model: Model
    stored: str | None
    """SQL reading its stored rows, or None: made by its SQL."""
    once: bool
    """Computed once as a table (when made by its SQL)."""


def plan(source: Source, chosen: Iterable[Model]) -> list[Step]:
    """What to do for each model of `chosen` (in the order given)."""
    out = []
    for m in chosen:
        body = source.stored(m)
        out.append(Step(m, body, body is None and m.materialized in source.once))
    return out


def build(con: duckdb.DuckDBPyConnection, source: Source,
          chosen: Iterable[Model] | None = None) -> None:
    """Make each model of `chosen` (default: every model, in build order) on `con`."""
    for step in plan(source, models() if chosen is None else chosen):
        m = step.model
        if step.stored is not None:
            con.execute(f"CREATE OR REPLACE VIEW {m.relation} AS {step.stored}")
            continue
        run_sql(con, m.path)
        if step.once:
            computed_once(con, m.relation, source.suffix)


def needed(targets: Iterable[Model], everything: list[Model] | None = None) -> list[Model]:
    """`targets` and every model they read or call, directly or through others, in build
    order."""
    everything = models() if everything is None else everything
    named = {m.name: m for m in everything}
    wanted = {m.name for m in targets}
    todo = list(wanted)
    while todo:
        more = reads([named[n].path for n in todo]) & named.keys() - wanted
        wanted |= more
        todo = list(more)
    return [m for m in everything if m.name in wanted]
