"""The SQL under sql/: its files in build order, and what their header comments say.

Each file creates the object named like the file (a view, or a macro). The
build order comes from the SQL itself, parsed with sqlglot: a file is built after the files
whose objects it reads or calls. Layers keep their order (macros, staging, intermediate, marts,
checks); a file that names an object of a later layer, or files that name each other in a
cycle, fail the build with the file names.
"""

import contextlib
import graphlib
import hashlib
import json
import os
from pathlib import Path

from transforms.errors import WarehouseError

SQL_DIR = Path(__file__).resolve().parents[2] / "sql"
LAYERS = ("macros", "staging", "intermediate", "marts", "checks")

_ORDER: dict[Path, tuple[tuple[tuple[str, int], ...], list[Path]]] = {}
"""The last build order worked out per SQL folder, with the files' names and times."""


def sql_files(root: Path | None = None) -> list[Path]:
    """The SQL files of `root` (default SQL_DIR) in build order."""
    root = root or SQL_DIR
    stamp = tuple((str(f.relative_to(root)), f.stat().st_mtime_ns)
                  for f in sorted(root.glob("*/*.sql")))
    cached = _ORDER.get(root)
    if cached is None or cached[0] != stamp:
        cached = (stamp, build_order(root))
        _ORDER[root] = cached
    return list(cached[1])


CACHED_TEXTS = 1000
"""At most this many SQL texts' references are kept in the cache file."""


def _cache_file() -> Path:
    """Where the references of SQL texts already parsed are kept between commands:
    sql-references.json in runlake's cache folder (settings.cache_home)."""
    from transforms import settings

    return settings.cache_home(settings.load().xdg_cache_home) / "sql-references.json"


def _cached_references(files: list[Path]) -> dict[Path, tuple[str, set[str]]]:
    """`references` of each file, parsed only for texts not parsed before: the cache is keyed
    by the SHA-256 of the text and the sqlglot version, so an edited file is parsed again;
    each ingest would otherwise parse every file (docs/performance.md)."""
    from importlib.metadata import version

    salt = f"sqlglot {version('sqlglot')}\n".encode()
    keys = {f: hashlib.sha256(salt + f.read_bytes()).hexdigest() for f in files}
    try:
        path: Path | None = _cache_file()
    except RuntimeError:  # no home folder to keep a cache in: parse every time
        path = None
    try:
        cache = json.loads(path.read_text()) if path is not None else {}
        if not isinstance(cache, dict):
            cache = {}
    except (OSError, ValueError):
        cache = {}
    found: dict[Path, tuple[str, set[str]]] = {}
    parsed = False
    for f, key in keys.items():
        hit = cache.get(key)
        if isinstance(hit, list) and len(hit) == 2 and isinstance(hit[0], str) \
                and isinstance(hit[1], list) and all(isinstance(r, str) for r in hit[1]):
            found[f] = (hit[0], set(hit[1]))
        else:
            found[f] = references(f)
            parsed = True
    fresh = {keys[f]: [name, sorted(refs)] for f, (name, refs) in found.items()}
    if path is not None and parsed:
        # Texts of other SQL folders are kept too, up to a bound (older sets are dropped).
        merged = cache | fresh if len(cache) + len(fresh) <= CACHED_TEXTS else fresh
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps(merged, sort_keys=True))
            os.replace(tmp, path)  # readers see the old cache or the new one, never half
        except OSError:  # a read-only home: parse again next time
            with contextlib.suppress(OSError):
                tmp.unlink()
    return found


def reads(files: list[Path]) -> set[str]:
    """The names the SQL files read or call, together (parsed once per text, as for the build
    order: see _cached_references)."""
    return set().union(*(refs for _, refs in _cached_references(files).values()))


def references(f: Path) -> tuple[str, set[str]]:
    """The object a SQL file creates, and the names of the tables, views and macros it reads
    or calls (without schema; its own CTE names left out)."""
    import sqlglot  # here: opening the warehouse for a query parses no SQL
    from sqlglot import exp

    try:
        trees = [t for t in sqlglot.parse(f.read_text(), read="duckdb") if t is not None]
    except sqlglot.errors.ParseError as e:
        raise WarehouseError(f"{f.parent.name}/{f.name}: cannot be parsed: "
                             f"{str(e).splitlines()[0]}") from e
    created = next((t for t in trees if isinstance(t, exp.Create)), None)
    if created is None:
        raise WarehouseError(f"{f.parent.name}/{f.name}: creates nothing (every SQL file "
                             "creates the view or macro named like the file)")
    target = created.this  # a Table, or a Schema / UserDefinedFunction around one
    while not isinstance(target, exp.Table | exp.Identifier) and target.this is not None:
        target = target.this
    name = target.name
    refs: set[str] = set()
    for tree in trees:
        ctes = {c.alias_or_name for c in tree.find_all(exp.CTE)}
        refs |= {t.name for t in tree.find_all(exp.Table) if t.name and t.name not in ctes}
        refs |= {fn.name for fn in tree.find_all(exp.Anonymous)}
    refs.discard(name)
    return name, refs


def build_order(root: Path) -> list[Path]:
    """Layer by layer; within a layer each file after the files it references."""
    files: dict[str, tuple[str, Path, set[str]]] = {}
    listed = {layer: sorted((root / layer).glob("*.sql")) for layer in LAYERS}
    found = _cached_references([f for layer in LAYERS for f in listed[layer]])
    for layer in LAYERS:
        for f in listed[layer]:
            name, refs = found[f]
            if name.lower() != f.stem.lower():
                raise WarehouseError(f"{layer}/{f.name} creates {name}: a file creates the "
                                     "object named like the file")
            files[f.stem] = (layer, f, refs)
    ordered: list[Path] = []
    for layer in LAYERS:
        here = {n: v for n, v in files.items() if v[0] == layer}
        graph = graphlib.TopologicalSorter[str]()
        for n, (_, f, refs) in here.items():
            later = sorted(r for r in refs if r in files
                           and LAYERS.index(files[r][0]) > LAYERS.index(layer))
            if later:
                raise WarehouseError(f"{layer}/{f.name} names {', '.join(later)}, built in a "
                                     "later layer")
            graph.add(n, *sorted(r for r in refs if r in here))
        try:
            graph.prepare()
        except graphlib.CycleError as e:
            raise WarehouseError(f"sql/{layer}: files reference each other in a cycle: "
                                 f"{', '.join(sorted(set(e.args[1])))}") from e
        while graph.is_active():
            ready = sorted(graph.get_ready())
            ordered += [here[n][1] for n in ready]
            graph.done(*ready)
    return ordered


def header(path: Path) -> dict[str, str]:
    """The `-- Purpose:` and `-- Grain:` of a SQL file's header comment."""
    found: dict[str, str] = {}
    key = None
    for line in path.read_text().splitlines():
        if not line.startswith("--"):
            break
        text = line[2:].strip()
        for k in ("Purpose", "Grain"):
            if text.startswith(k + ":"):
                key, text = k.lower(), text[len(k) + 1:].strip()
        if key:
            found[key] = (found.get(key, "") + " " + text).strip()
    return found


def view_docs() -> dict[str, dict[str, str]]:
    """Purpose and grain of each public view, from the headers of sql/marts."""
    return {f.stem: header(f) for f in sorted((SQL_DIR / "marts").glob("*.sql"))}


def constant(macro: str, root: Path | None = None) -> float:
    """The number a constant macro under sql/macros returns (significance_level(),
    warning_level()), read from its file: the SQL stays the one place it is set."""
    f = (root or SQL_DIR) / "macros" / f"{macro}.sql"
    import sqlglot
    from sqlglot import exp

    created = sqlglot.parse_one(f.read_text(), read="duckdb")
    body = created.expression
    if not isinstance(body, exp.Literal) or body.is_string:
        raise WarehouseError(f"macros/{f.name}: {macro}() is not a number")
    return float(body.this)
