"""The README's data dictionary and flag table are the ones the code declares."""

import re
from pathlib import Path

from tests.conftest import REPO
from transforms import warehouse
from transforms.docs import BEGIN, END, block
from transforms.flags import CATALOG


def test_readme_dictionary_is_current() -> None:
    """Regenerate with `python -m transforms.docs` when a schema or flag changes."""
    text = (REPO / "README.md").read_text()
    assert BEGIN in text and END in text
    start = text.index(BEGIN)
    assert text[start:text.index(END) + len(END)] == block()


def test_one_flag_catalog(tmp_path: Path) -> None:
    """The catalog, the README's table of codes, the warehouse's flag_codes table and the spec's
    codes agree: every spec code is in the catalog with its severity and category, and the
    extra codes are the two the README documents as deviations."""
    readme = (REPO / "README.md").read_text()
    table = readme[readme.index("### Flag codes"):]
    in_readme = {m[1]: (m[2], m[3]) for m in re.finditer(
        r"^\| `([a-z_]+)` \| (info|warning|error) \| ([a-z]+) \|", table, re.M)}
    catalog = {c: (s.severity, s.category) for c, s in CATALOG.items()}
    assert in_readme == catalog
    warehouse.build(tmp_path)
    con = warehouse.connect(tmp_path)
    try:
        stored = {r[0]: (r[1], r[2]) for r in con.execute(
            "SELECT code, severity, category FROM flag_codes").fetchall()}
    finally:
        con.close()
    assert stored == catalog
    spec = (REPO.parent / "shared" / "spec" / "warehouse.md").read_text()
    in_spec = {}
    for m in re.finditer(r"^\| (`[a-z_]+`(?: / `[a-z_]+`)*) \| (info|warning|error) \| "
                         r"([a-z]+) \|", spec, re.M):
        for code in re.findall(r"`([a-z_]+)`", m[1]):
            in_spec[code] = (m[2], m[3])
    assert in_spec and all(catalog.get(c) == v for c, v in in_spec.items())
    assert set(catalog) - set(in_spec) == {"envelope_malformed", "span_malformed"}
