"""The read-only query policy of `runlake sql`: one statement, and that one a query.

DuckDB's own parser says what each statement is; an EXPLAIN counts as a query only when what it
explains is a SELECT (EXPLAIN ANALYZE runs it). The connection is sandboxed apart (db.sandbox):
this check gives a clear message, the sandbox makes the rule hold whatever the text.
"""

import duckdb

from transforms.errors import InputError

QUERY_KINDS = ("SELECT", "EXPLAIN", "PRAGMA")
"""The statement types `runlake sql` runs (SELECT covers WITH, DESCRIBE, SHOW and FROM)."""


def check_read_only(con: duckdb.DuckDBPyConnection, query: str) -> None:
    """Raise an InputError unless `query` is exactly one statement of QUERY_KINDS."""
    kinds = statement_kinds(con, query)
    if len(kinds) != 1 or kinds[0] not in QUERY_KINDS:
        raise InputError("runlake sql runs one query (SELECT, WITH, DESCRIBE, SHOW, EXPLAIN), "
                         f"not {', '.join(kinds) or 'nothing'}: export results with --format "
                         "and --output")


def statement_kinds(con: duckdb.DuckDBPyConnection, query: str) -> list[str]:
    """The type of each statement of `query` as DuckDB's parser reads it; an EXPLAIN is
    EXPLAIN only when what it explains is a SELECT (EXPLAIN ANALYZE runs it), else the type
    of that statement."""
    kinds = []
    for statement in con.extract_statements(query):
        kind = statement.type.name
        if kind == "EXPLAIN":
            inner = explained(con, statement.query)
            kind = "EXPLAIN" if inner == {"SELECT"} else \
                f"EXPLAIN of {', '.join(sorted(inner)) or 'an unreadable statement'}"
        kinds.append(kind)
    return kinds


def explained(con: duckdb.DuckDBPyConnection, text: str) -> set[str]:
    """The types of the statement an EXPLAIN explains, read by DuckDB's own tokenizer and
    parser. `EXPLAIN [ANALYZE] stmt` and `EXPLAIN (options) stmt` are the forms: every
    reading of the text that parses is taken, so the one DuckDB runs is among them."""
    found = duckdb.tokenize(text)
    ends = [offset for offset, _ in found[1:]] + [len(text)]
    read = [(offset, _word(text[offset:end])) for (offset, kind), end
            in zip(found, ends, strict=True) if kind != duckdb.token_type.comment]
    tokens, words = [t for t, _ in read], [w for _, w in read]
    starts = tokens[1:2]
    if len(words) > 2 and words[1] in ("ANALYZE", "ANALYSE"):
        starts.append(tokens[2])
    if len(words) > 1 and words[1] == "(":
        depth = 0
        for i in range(1, len(words)):
            depth += (words[i] == "(") - (words[i] == ")")
            if depth == 0:
                starts += tokens[i + 1:i + 2]
                break
    kinds: set[str] = set()
    for start in starts:
        try:
            statements = con.extract_statements(text[start:])
        except duckdb.Error:
            continue
        kinds.update(s.type.name for s in statements)
        if len(statements) > 1:
            kinds.add("MULTI")
    return kinds


def _word(piece: str) -> str:
    """A token's text, upper-cased, without a comment after it: DuckDB 1.5's tokenizer gives no
    comment tokens, so a comment belongs to the text up to the next token's offset."""
    for mark in ("--", "/*"):
        cut = piece.find(mark)
        if cut > 0:
            piece = piece[:cut]
    return piece.strip().upper()

