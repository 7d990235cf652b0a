"""JSON as runlake reads and writes it: orjson's speed, without its two losses.

orjson reads an integer beyond 64 bits as a double (a 30-digit id would become
1.2345678901234568e+29) and writes no value nested more than 254 levels deep (it reads up to
1,024). `loads` keeps such integers exact, as Python ints, and `dumps` writes them digit for
digit; a value nested deeper than orjson writes is written by the standard library's encoder
(`text` says so, for the readers that flag it). What is valid JSON is still orjson's rule: a
text orjson refuses is refused.

`loads` reads with msgspec first: it keeps the same four rules (the last of a repeated key
wins; NaN, Infinity and lone surrogates are refused; integers beyond 64 bits stay exact) and
needs no look for long integers. It refuses a few texts orjson reads (nesting deeper than
msgspec's limit, some invalid UTF-8 it reports otherwise): those are read as before, so that
what `loads` accepts, and the value it gives, is orjson's rule whichever reads it
(tests/property/test_json_rule.py).
"""

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import msgspec
import orjson

MAX_DEPTH = 254
"""The deepest nesting orjson writes; a deeper value is written by the standard library."""
READ_DEPTH = 1024
"""The deepest nesting orjson (and so runlake) reads."""

# An integer orjson reads as a double: 2**64 and above have 20 digits, below -2**63 19 digits
# after the sign. Looked for in the text with every digit made a 0 (bytes.translate and `in`
# run at memory speed, unlike a regular expression); a match inside a string or a fraction
# only costs a second reading.
_DIGITS_AS_ZERO = bytes(b"0"[0] if chr(i).isdigit() and i < 128 else i for i in range(256))
_TWENTY_DIGITS = b"0" * 20
_SIGN_AND_NINETEEN = b"-" + b"0" * 19


def _may_hold_big_int(data: bytes) -> bool:
    zeroed = data.translate(_DIGITS_AS_ZERO)
    return _TWENTY_DIGITS in zeroed or _SIGN_AND_NINETEEN in zeroed


@contextmanager
def _room(depth: int) -> Iterator[None]:
    """Python's recursion limit raised (for this call only) so that the standard library's
    JSON reader and writer can go `depth` levels deep."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(old + depth + 100)  # the caller's frames stay under the old limit
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


_DECODE = msgspec.json.Decoder().decode


def loads(data: bytes | str) -> Any:
    """The value of a JSON text, as orjson reads it (raising orjson.JSONDecodeError for what
    it refuses), with every integer beyond 64 bits exact."""
    try:
        return _DECODE(data)
    except (msgspec.MsgspecError, ValueError, RecursionError):
        return orjson_loads(data)  # refused, or read otherwise: orjson's rule says


def orjson_loads(data: bytes | str) -> Any:
    """`loads` by orjson alone, with a second reading for integers beyond 64 bits."""
    value = orjson.loads(data)
    if not _may_hold_big_int(data if isinstance(data, bytes) else data.encode()):
        return value
    with _room(READ_DEPTH):  # orjson accepted it: at most READ_DEPTH levels
        return json.loads(data)


def depth(value: Any) -> int:
    """How deeply a JSON value nests (a scalar: 0, `[]`: 1, `[[1]]`: 2)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        node, d = stack.pop()
        if isinstance(node, dict):
            node = list(node.values())
        elif not isinstance(node, list):
            continue
        deepest = max(deepest, d + 1)
        stack.extend((child, d + 1) for child in node if isinstance(child, dict | list))
    return deepest


def text(value: Any, sort: bool = False) -> tuple[str, bool]:
    """Compact JSON text of a parsed value (keys sorted with `sort`), and whether the value
    nests deeper than MAX_DEPTH. Never raises for a value `loads` returned."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS if sort else 0).decode(), False
    except orjson.JSONEncodeError:
        pass  # an integer beyond 64 bits, or nesting deeper than orjson writes
    levels = depth(value)
    with _room(levels):
        written = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=sort,
                             allow_nan=False)
    return written, levels > MAX_DEPTH


def dumps(value: Any, sort: bool = False) -> str:
    """Compact JSON text of a parsed value (keys sorted with `sort`); see `text`."""
    return text(value, sort)[0]
