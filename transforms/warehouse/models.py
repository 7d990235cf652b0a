"""What each SQL model under sql/ declares about how it is made and stored: the lines at the top
of its header comment, read here and nowhere else.

    -- materialized: view | table | window_table | macro
    -- stored: <lake table>          (optional: the derive stores its rows there)
    -- partition: week | none        (with stored: rewritten a week at a time, or whole)
    -- scope: lake                   (optional: computed over the whole lake, not a window)

- `view`: a view, wherever the warehouse is built.
- `table`: made by its SQL, then computed once as a table wherever it is computed (an
  in-memory warehouse, a derive's window of days): the models after it read it many times.
- `window_table`: a view, but a derive's window of days computes it once as a table.
- `macro`: a scalar or table macro.
- `stored`: the derive computes the model and stores its rows as that lake table; a build over
  a lake version that has the table reads it from there instead of running the SQL.
- `scope: lake`: the derive computes it over every day of the lake once (the lines a later
  line replaced, a span whose run is far away), not a week at a time.
"""

from dataclasses import dataclass
from functools import cache
from pathlib import Path

from transforms.errors import WarehouseError
from transforms.warehouse.sqlfiles import sql_files

KINDS = ("view", "table", "window_table", "macro")
PARTITIONS = ("week", "none")
SCOPES = ("window", "lake")
KEYS = ("materialized", "stored", "partition", "scope")


@dataclass(frozen=True)
class Model:
    """One SQL file under sql/ and what its header declares."""

    path: Path
    name: str
    layer: str
    """The folder under sql/ it is in (macros, staging, intermediate, marts, checks)."""
    materialized: str
    stored: str | None = None
    """The lake table the derive stores its rows as (relative to the lake), if any."""
    partition: str = "none"
    scope: str = "window"

    @property
    def relation(self) -> str:
        """Its qualified name in a warehouse: main.<name> for a public model, else
        <schema>.<name> with the schema named like its folder."""
        schema = "main" if self.layer == "marts" else self.layer
        return f"{schema}.{self.name}"

    @property
    def weekly(self) -> bool:
        """Stored a week at a time, computed in a derive's window of days."""
        return self.stored is not None and self.partition == "week"

    @property
    def lake_wide(self) -> bool:
        return self.scope == "lake"


def declaration(path: Path) -> dict[str, str]:
    """The `key: value` lines of KEYS at the top of a SQL file's header comment."""
    found: dict[str, str] = {}
    for line in path.read_text().splitlines():
        if not line.startswith("--"):
            break
        key, sep, value = line[2:].strip().partition(":")
        if not sep or key.strip() not in KEYS:
            break
        found[key.strip()] = value.strip()
    return found


def parse(path: Path) -> Model:
    """The model of a SQL file, its declaration checked."""
    where = f"sql/{path.parent.name}/{path.name}"
    said = declaration(path)
    kind = said.get("materialized")
    if kind not in KINDS:
        raise WarehouseError(f"{where}: its header starts with `-- materialized: ` and one of "
                             f"{', '.join(KINDS)}")
    partition = said.get("partition", "none")
    scope = said.get("scope", "window")
    if partition not in PARTITIONS or scope not in SCOPES:
        raise WarehouseError(f"{where}: partition is one of {', '.join(PARTITIONS)}; scope "
                             f"one of {', '.join(SCOPES)}")
    if said.get("stored") is None and partition != "none":
        raise WarehouseError(f"{where}: a partition is said only of a stored model")
    return Model(path, path.stem, path.parent.name, kind, said.get("stored"), partition, scope)


@cache
def _parsed(path: Path, stamp: int) -> Model:
    return parse(path)


def models(root: Path | None = None) -> list[Model]:
    """Every model under `root` (default sqlfiles.SQL_DIR), in build order."""
    return [_parsed(f, f.stat().st_mtime_ns) for f in sql_files(root)]


def by_name(root: Path | None = None) -> dict[str, Model]:
    return {m.name: m for m in models(root)}


def stored_models(root: Path | None = None) -> list[Model]:
    """The models the derive stores in the lake, in build order."""
    return [m for m in models(root) if m.stored is not None]

