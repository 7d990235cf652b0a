"""The JSON rule of a trace line is orjson's, whichever library reads it: `jsontext.loads`
reads with msgspec first and falls back to orjson (with its second reading for long integers)
for what msgspec refuses. On valid lines, lines cut or spliced, and hostile bytes, it accepts
exactly what the orjson path accepts, with the same value to the type (1 is not 1.0), the
same order of keys, and the last of a repeated key."""

import json
from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from transforms.read import jsontext

SPECIAL = [b"NaN", b"Infinity", b"-Infinity", b"1e400", b"-1e400",
           b"123456789012345678901234567890",
           b"-12345678901234567890", b"18446744073709551615", b"9223372036854775808", b"-0",
           b"1E2", b"1.", b".5", b"01", b'"\\ud800"', b'"\\udc00\\ud800"', b'"\\u0000"',
           b'"\xff"', b'"\xc3"', b'"\t"', b"\x00", b"\xef\xbb\xbf", b"true", b"nul", b"[",
           b"]", b"{", b"}", b",", b":", b'"a"', b'"a":1', b"  ", b"\r", b"\n", b"[]" * 3]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**80, 2**80) | st.floats(allow_nan=False)
    | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["a", "b", "é", "\u00e9", "k"]) | st.text(max_size=3), inner,
        max_size=3),
    max_leaves=10)


def _tokens(value: Any) -> list[str]:
    """The value as a list of typed tokens, keys in order (iterative: values nest 1,024 deep)."""
    out: list[str] = []
    stack: list[Any] = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            out.append(f"{{{len(v)}")
            for k, item in reversed(list(v.items())):
                stack += [item, ("key", k)]
        elif isinstance(v, list):
            out.append(f"[{len(v)}")
            stack += reversed(v)
        else:
            out.append(f"{type(v).__name__}:{v!r}")
    return out


def _outcome(read: Any, data: bytes) -> tuple[str, list[str]]:
    try:
        return "value", _tokens(read(data))
    except orjson.JSONDecodeError:
        return "refused", []


def _same(data: bytes) -> None:
    assert _outcome(jsontext.loads, data) == _outcome(jsontext.orjson_loads, data), data


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=json_values, cut=st.integers(0, 400), splice=st.sampled_from(SPECIAL),
       where=st.integers(0, 400))
def test_the_rule_is_orjsons_on_valid_cut_and_spliced_lines(value: Any, cut: int,
                                                             splice: bytes, where: int) -> None:
    text = json.dumps({"v": value, "v2": value}, ensure_ascii=False).encode()
    _same(text)
    _same(text[:cut])
    at = min(where, len(text))
    _same(text[:at] + splice + text[at:])
    _same(text[:at] + splice + text[at + len(splice):])


@settings(max_examples=400, deadline=None)
@given(data=st.binary(max_size=40))
def test_the_rule_is_orjsons_on_any_bytes(data: bytes) -> None:
    _same(data)


def test_the_rule_holds_at_its_edges() -> None:
    for data in [b'{"a":1,"a":2.0}', b'{"x":123456789012345678901234567890}',
                 b'{"x":-123456789012345678901234567890}', b'{"x":NaN}', b'{"x":"\\ud800"}',
                 b"\xef\xbb\xbf{}", b"[" * 1010 + b"]" * 1010, b"[" * 1030 + b"]" * 1030,
                 b'{"\\u00e9":1,"\xc3\xa9":2}', b'{"a":1}{}', b'{"a":"\xff"}']:
        _same(data)
    # Deeper than msgspec reads, within what orjson reads: read all the same.
    assert jsontext.loads(b"[" * 1010 + b"]" * 1010) is not None
    assert jsontext.loads(b'{"x":123456789012345678901234567890}') == {
        "x": 123456789012345678901234567890}
