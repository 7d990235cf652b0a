"""The README's data dictionary and flag table are the ones the code declares."""

import re
from pathlib import Path

from devtools.docs import BEGIN, END, block
from tests.conftest import REPO
from transforms import warehouse
from transforms.contracts.flags import CATALOG


def test_readme_dictionary_is_current() -> None:
    """Regenerate with `python -m devtools.docs` when a schema or flag changes."""
    text = (REPO / "README.md").read_text()
    assert BEGIN in text and END in text
    start = text.index(BEGIN)
    assert text[start:text.index(END) + len(END)] == block()


def test_one_flag_catalog(tmp_path: Path) -> None:
    """The catalog, the README's table of codes and the warehouse's flag_codes table agree,
    code by code, with severity and category."""
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
