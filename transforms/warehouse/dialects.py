"""The warehouse SQL in another engine's dialect: the SQL files under sql/, translated with
sqlglot, for `runlake views --dialect spark|trino` (transforms.warehouse.scripts).

DuckDB's macros become inline expressions (a table macro such as `regressions(day, n)` a
subquery; a relation named to `query_table`, the table or CTE of that name, the CTE renamed
with the macro's own); `*` with EXCLUDE or REPLACE and UNION BY NAME are spelled out with the
columns each relation has, read from a DuckDB connection holding the views; a macro DuckDB
writes with a function the other engine lacks has its own body under sql/dialects/<dialect>/.
"""

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import duckdb
import sqlglot
from sqlglot import exp
from sqlglot.optimizer.annotate_types import annotate_types
from sqlglot.optimizer.qualify import qualify

from transforms.errors import WarehouseError
from transforms.warehouse.sqlfiles import SQL_DIR, sql_files

DIALECTS = ("spark", "trino")


@dataclass(frozen=True)
class Macro:
    params: list[str]
    body: exp.Expr
    table: bool


def _created(tree: exp.Expr) -> exp.Create:
    if not isinstance(tree, exp.Create):
        raise WarehouseError(f"expected a CREATE statement, found: {tree.sql()[:80]}")
    return tree


def _macro(tree: exp.Create) -> tuple[str, Macro]:
    fn = tree.this
    body = tree.expression
    return fn.this.name, Macro([p.name for p in fn.expressions], body, _is_table(body))


def _is_table(body: exp.Expr) -> bool:
    """A table macro's body is a query; a scalar macro's may be a (parenthesized) subquery."""
    return isinstance(body, exp.Query) and not isinstance(body, exp.Subquery)


def macros(dialect: str, root: Path = SQL_DIR) -> dict[str, Macro]:
    """Every macro of sql/ (scalar or table, in any layer), with the bodies
    sql/dialects/ gives in place of DuckDB's where the engine lacks what DuckDB uses: in Spark
    SQL under spark/ (for Trino too), in Trino SQL under trino/ where Trino needs its own."""
    found: dict[str, Macro] = {}
    for f in sql_files(root):
        for tree in sqlglot.parse(f.read_text(), read="duckdb"):
            if isinstance(tree, exp.Create) and tree.args.get("kind") == "MACRO":
                name, m = _macro(tree)
                found[name] = m
    # Spark's bodies serve Trino too (sqlglot translates them) unless Trino has its own.
    folders = ["spark"] if dialect == "spark" else ["spark", dialect]
    for folder in folders:
        for f in sorted((root / "dialects" / folder).glob("*.sql")):
            tree = _created(sqlglot.parse_one(f.read_text(), read=folder))
            fn = tree.this
            params = [p.this.name if isinstance(p, exp.ColumnDef) else p.name
                      for p in fn.expressions]
            body = tree.expression
            if isinstance(body, exp.Return):
                body = body.this
            found[fn.this.name] = Macro(params, body, _is_table(body))
    return found


def _substitute(body: exp.Expr, params: list[str],
                args: list[exp.Expr]) -> exp.Expr:
    given = dict(zip(params, args, strict=False))
    for p in params[len(args):]:
        given[p] = exp.null()

    def swap(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Column) and not node.table and node.name in given:
            return exp.paren(given[node.name].copy(), copy=False)
        return node

    return copy.deepcopy(body).transform(swap)


def _own_ctes(body: exp.Expr, prefix: str) -> exp.Expr:
    """A table macro's body with its CTEs renamed `<prefix>__<name>`: engines that lift
    CTEs to the top of a statement (Spark) then see no two with one name."""
    names = {c.alias_or_name for c in body.find_all(exp.CTE)}
    if not names:
        return body

    def rename(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Table) and isinstance(node.this, exp.Anonymous):
            # A relation named as a string to a table macro (query_table) may be a CTE here.
            for arg in node.this.expressions:
                if isinstance(arg, exp.Literal) and arg.is_string and arg.this in names:
                    arg.replace(exp.Literal.string(f"{prefix}__{arg.this}"))
            return node
        if isinstance(node, exp.CTE) and node.alias_or_name in names:
            node.set("alias", exp.TableAlias(
                this=exp.to_identifier(f"{prefix}__{node.alias_or_name}")))
        elif isinstance(node, exp.Table) and not node.db and node.name in names:
            alias = node.alias or node.name
            node.set("this", exp.to_identifier(f"{prefix}__{node.name}"))
            node.set("alias", exp.TableAlias(this=exp.to_identifier(alias)))
        return node

    return body.transform(rename)


def _named_windows(tree: exp.Expr) -> None:
    """`OVER name` and `OVER (name ORDER BY ...)` with the WINDOW clause's definition spelled
    out (Spark cannot extend a named window)."""
    for select in list(tree.find_all(exp.Select)):
        named = {w.name: w for w in select.args.get("windows") or []}
        if not named:
            continue
        for w in select.find_all(exp.Window):
            base = named.get(w.alias) if isinstance(w.args.get("alias"), exp.Identifier) \
                else None
            if base is None or w.parent_select is not select:
                continue
            w.set("alias", None)
            for key in ("partition_by", "order", "spec"):
                if not w.args.get(key) and base.args.get(key):
                    w.set(key, copy.deepcopy(base.args[key]))
        select.set("windows", None)


def inline(tree: exp.Expr, found: dict[str, Macro]) -> exp.Expr:
    """`tree` with every macro call replaced by its body (nested calls too)."""
    uses: dict[str, int] = {}
    for _ in range(20):
        changed = False

        def expand(node: exp.Expr) -> exp.Expr:
            nonlocal changed
            if isinstance(node, exp.Table) and isinstance(node.this, exp.Anonymous):
                call = node.this
                if call.name.lower() == "query_table":
                    changed = True
                    named = call.expressions[0].unnest()
                    table = exp.to_table(named.name, dialect="duckdb")
                    if node.alias:
                        table.set("alias", exp.TableAlias(this=exp.to_identifier(node.alias)))
                    return table
                m = found.get(call.name)
                if m is not None and m.table:
                    changed = True
                    uses[call.name] = uses.get(call.name, 0) + 1
                    body = _own_ctes(_substitute(m.body, m.params, call.expressions),
                                     f"{call.name}{uses[call.name]}")
                    return exp.Subquery(
                        this=body,
                        alias=exp.TableAlias(this=exp.to_identifier(node.alias or call.name)))
            if isinstance(node, exp.Anonymous) and node.name in found \
                    and not found[node.name].table:
                changed = True
                m = found[node.name]
                return exp.paren(_substitute(m.body, m.params, node.expressions), copy=False)
            return node

        tree = tree.transform(expand)
        if not changed:
            return tree
    raise WarehouseError("macros call each other without end")


def relations(con: duckdb.DuckDBPyConnection) -> dict[str, dict[str, dict[str, str]]]:
    """Each schema's tables and views with their columns and DuckDB types, in order."""
    out: dict[str, dict[str, dict[str, str]]] = {}
    for schema, table, column, dtype in con.execute(
            "SELECT table_schema, table_name, column_name, data_type "
            "FROM information_schema.columns ORDER BY table_schema, table_name, "
            "ordinal_position").fetchall():
        out.setdefault(schema, {}).setdefault(table, {})[column] = dtype
    return out


def _names(q: exp.Expr) -> list[str]:
    if isinstance(q, exp.Union):
        left = _names(q.left)
        if not q.args.get("by_name"):
            return left
        return left + [n for n in _names(q.right) if n not in left]
    if isinstance(q, exp.Subquery):
        return _names(q.this)
    assert isinstance(q, exp.Query)
    return list(q.named_selects)


def _arrange(q: exp.Expr, order: list[str]) -> None:
    """Make a query's columns come in `order` by name (missing ones NULL)."""
    if isinstance(q, exp.Union):
        _arrange(q.left, order)
        _arrange(q.right, order)
        q.set("by_name", None)
        return
    if isinstance(q, exp.Subquery):
        _arrange(q.this, order)
        return
    assert isinstance(q, exp.Select)
    by_name = {e.alias_or_name: e for e in q.expressions}
    q.set("expressions", [by_name[n] if n in by_name
                          else exp.alias_(exp.null(), n) for n in order])


def _by_name(tree: exp.Expr) -> None:
    for union in list(tree.find_all(exp.Union)):
        if union.args.get("by_name"):
            _arrange(union, _names(union))


def _struct(node: exp.Expr, dialect: str) -> exp.Expr:
    """DuckDB's row value `(a, b)` as an orderable struct of the target engine."""
    if isinstance(node, exp.Tuple):
        if dialect == "spark":
            return exp.Anonymous(this="struct", expressions=node.expressions)
        return exp.Anonymous(this="row", expressions=node.expressions)
    return node


def _rewrite(tree: exp.Expr, dialect: str) -> exp.Expr:
    """What sqlglot's generator leaves DuckDB-only, rewritten for `dialect`."""

    def fix(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.ArgMax | exp.ArgMin) and node.expression is not None:
            node.set("expression", _struct(node.expression, dialect))
        if isinstance(node, exp.RegexpFullMatch) or (
                isinstance(node, exp.Anonymous) and node.name.lower() == "regexp_full_match"):
            subject, pattern = (node.this, node.expression) \
                if isinstance(node, exp.RegexpFullMatch) else tuple(node.expressions)
            anchored = exp.DPipe(this=exp.DPipe(this=exp.Literal.string("^(?:"),
                                                expression=pattern.copy()),
                                 expression=exp.Literal.string(")$"))
            return exp.RegexpLike(this=subject.copy(), expression=anchored)
        if isinstance(node, exp.ArrayAgg) and dialect == "spark":
            inner = node.this
            if isinstance(inner, exp.Order):
                keys = inner.expressions
                distinct = isinstance(inner.this, exp.Distinct)
                value = inner.this.expressions[0] if distinct else inner.this
                if len(keys) != 1 or keys[0].this != value or keys[0].args.get("desc"):
                    raise WarehouseError("an ordered list() needs its own value as the only "
                                         f"key on Spark: {node.sql('duckdb')}")
                collected = exp.Anonymous(this="collect_set" if distinct else "collect_list",
                                          expressions=[value.copy()])
                return exp.Anonymous(this="array_sort", expressions=[collected])
        if isinstance(node, exp.Sub | exp.Add) and _is_date(node.this) \
                and _is_integer(node.expression):
            days = node.expression.copy()
            if isinstance(node, exp.Sub):
                days = exp.Neg(this=exp.paren(days, copy=False))
            return exp.DateAdd(this=node.this.copy(), expression=days, unit=exp.var("DAY"))
        if dialect == "trino":
            if isinstance(node, exp.IgnoreNulls) and isinstance(node.this, exp.AnyValue):
                return node.this  # arbitrary() takes a non-null value already
            if isinstance(node, exp.Anonymous) and node.name.lower() == "printf":
                return exp.Anonymous(this="format", expressions=node.expressions)
            if isinstance(node, exp.Mode) or (isinstance(node, exp.Anonymous)
                                              and node.name.lower() == "mode"):
                return _trino_mode(node.this if isinstance(node, exp.Mode)
                                   else node.expressions[0])
        if isinstance(node, exp.Quantile | exp.PercentileCont):
            value, q = node.this, node.args.get("quantile") or node.expression
            name = "percentile" if dialect == "spark" else "approx_percentile"
            return exp.Anonymous(this=name, expressions=[value.copy(), q.copy()])
        return node

    return tree.transform(fix)


def _is_date(node: exp.Expr) -> bool:
    return node.type is not None and node.type.this == exp.DataType.Type.DATE


def _is_integer(node: exp.Expr) -> bool:
    return node.type is not None and node.type.this in exp.DataType.INTEGER_TYPES


def _trino_mode(value: exp.Expr) -> exp.Expr:
    """DuckDB's mode(x) in Trino, which has none: the most frequent value (the least of
    equally frequent ones), from histogram(x)."""
    return sqlglot.parse_one(
        "element_at(array_sort(transform(map_entries(histogram(__value)), "
        "e -> row(-e[2], e[1]))), 1)[2]", read="trino").transform(
        lambda n: value.copy() if isinstance(n, exp.Column) and n.name == "__value" else n)


def translate_query(sql: str | exp.Expr, found: dict[str, Macro],
                    schema: dict[str, dict[str, dict[str, str]]], dialect: str) -> exp.Expr:
    """One DuckDB query with macros inlined, stars spelled out and DuckDB-only forms rewritten,
    ready to be generated in `dialect`."""
    tree = sqlglot.parse_one(sql, read="duckdb") if isinstance(sql, str) else sql
    tree = inline(tree, found)
    tree = qualify(tree, dialect="duckdb", schema=cast(dict[str, object], schema),
                   expand_stars=True, validate_qualify_columns=False, quote_identifiers=False,
                   identify=False, db="main")
    tree = annotate_types(tree, schema=cast(dict[str, object], schema), dialect="duckdb")
    _by_name(tree)
    _named_windows(tree)
    return _rewrite(tree, dialect)
