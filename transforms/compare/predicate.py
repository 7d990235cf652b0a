"""The predicates of `runlake compare`: SQL text that must be one true/false condition over the
columns of `runs`, and nothing else.

sqlglot reads the text (DuckDB's dialect); every node of the expression must be of a kind
listed here: columns of `runs`, literals, comparisons, AND/OR/NOT, IN and BETWEEN lists, LIKE,
CASE, casts (DATE '2026-11-20'), intervals, arithmetic and a few string functions. A subquery,
a table, a table function (read_csv, query_table), any other function (getvariable), a
parameter, a `;` or a second statement is refused before anything runs. The checked
expression is written back by sqlglot and run inside the same DuckDB sandbox as `runlake sql`
(transforms.db.sandbox), so that even a kind of node allowed by mistake could read or write no
file outside the lake.
"""

from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.tokens import TokenType

from transforms.errors import InputError

ALLOWED: tuple[type[exp.Expr], ...] = (
    exp.Column, exp.Identifier, exp.Literal, exp.Boolean, exp.Null, exp.Paren,
    exp.And, exp.Or, exp.Not, exp.Xor,
    exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.NullSafeEQ, exp.NullSafeNEQ,
    exp.Is, exp.In, exp.Between, exp.Like, exp.ILike, exp.Escape,
    exp.Cast, exp.TryCast, exp.DataType, exp.Interval, exp.Var,
    exp.Neg, exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Mod, exp.DPipe,
    exp.Case, exp.If, exp.Coalesce,
    exp.Lower, exp.Upper, exp.Length, exp.Trim, exp.StartsWith, exp.RegexpLike,
)
"""The kinds of sqlglot node a predicate may hold; anything else is refused."""

MAX_NESTING = 32
"""The deepest nesting of parentheses and NOTs a predicate may have: deeper ones are refused
before they are parsed (sqlglot reads them by recursion)."""


def check(text: str, columns: set[str], option: str) -> str:
    """`text` (the value of `option`) as DuckDB SQL written back by sqlglot, once it is one
    condition over `columns` (the runs view's, lower case) made of ALLOWED nodes only.
    Raises an InputError in one line saying what is refused."""
    said = f"{option} {text!r}"
    if not text.strip():
        raise InputError(f"{option}: an empty predicate; give a condition over runs, like "
                         "\"model = 'gpt-4o'\"")
    try:
        tokens = sqlglot.tokenize(text, read="duckdb")
        if _nesting(tokens) > MAX_NESTING:
            raise InputError(f"{option}: the predicate nests parentheses and NOTs more than "
                             f"{MAX_NESTING} levels deep; write it flatter")
        trees = [t for t in sqlglot.parse(text, read="duckdb") if t is not None]
    except SqlglotError as e:
        raise InputError(f"{said} is not SQL runlake can read: "
                         f"{' '.join(str(e).split())[:200]}") from None
    except RecursionError:
        raise InputError(f"{option}: the predicate nests too deeply to be read; write it "
                         "flatter") from None
    if any(t.token_type == TokenType.SEMICOLON for t in tokens) or len(trees) != 1:
        raise InputError(f"{said}: one condition, without ';' or a second statement")
    tree = trees[0]
    if isinstance(tree, exp.Query | exp.Command) or not isinstance(tree, exp.Condition) \
            or isinstance(tree, exp.Func) and not isinstance(tree, ALLOWED):
        raise InputError(f"{said}: a condition over runs' columns, like \"model = 'gpt-4o'\", "
                         f"not a {type(tree).__name__.upper()} statement")
    for node in tree.walk():
        if isinstance(node, exp.Query | exp.Subquery | exp.Table | exp.Exists | exp.Unnest):
            raise InputError(f"{said}: no subquery or table; a condition over runs' columns "
                             "only")
        if isinstance(node, exp.Placeholder | exp.Parameter):
            raise InputError(f"{said}: no parameter; write the value in the predicate")
        if not isinstance(node, ALLOWED):
            name = node.name if isinstance(node, exp.Anonymous) else \
                (node.sql_name() if isinstance(node, exp.Func) else type(node).__name__)
            raise InputError(f"{said}: {name.upper()} is not allowed in a predicate (columns "
                             "of runs, literals, comparisons, AND/OR/NOT, IN, BETWEEN, LIKE, "
                             "CASE, casts and lower/upper/length/trim/starts_with/"
                             "regexp_matches)")
        if isinstance(node, exp.Column):
            if node.table and node.table.lower() != "runs" or node.args.get("db") \
                    or node.args.get("catalog"):
                raise InputError(f"{said}: {node.sql('duckdb')} is not a column of runs")
            if node.name.lower() not in columns:
                raise InputError(f"{said}: runs has no column {node.name!r} (its columns: "
                                 f"{', '.join(sorted(columns))})")
    return tree.sql(dialect="duckdb", comments=False)


def _nesting(tokens: list[Any]) -> int:
    """The deepest nesting of `tokens`: open parentheses plus the NOTs in a row within them."""
    deepest = depth = nots = 0
    for t in tokens:
        if t.token_type == TokenType.L_PAREN:
            depth, nots = depth + 1, 0
        elif t.token_type == TokenType.R_PAREN:
            depth, nots = max(depth - 1, 0), 0
        elif t.token_type == TokenType.NOT:
            nots += 1
        else:
            nots = 0
        deepest = max(deepest, depth + nots)
    return deepest
