"""The data dictionary and the flag code table as markdown, generated from the code.

`python -m devtools.docs` prints the block that docs/data-dictionary.md carries between its
`<!-- generated:dictionary -->` markers, `--write` puts it there; a test keeps the two equal.
"""

import sys
import tempfile
from pathlib import Path

from transforms import warehouse
from transforms.contracts.flags import CATALOG
from transforms.contracts.schemas import TABLES, VIEW_COLUMNS
from transforms.lake import duckdb_type

DICTIONARY = Path(__file__).resolve().parent.parent / "docs" / "data-dictionary.md"
BEGIN = "<!-- generated:dictionary -->"
END = "<!-- /generated:dictionary -->"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def dictionary() -> str:
    out = ["### Tables", ""]
    for t in TABLES.values():
        out += [f"#### `{t.name}`: {t.grain}", "", "| column | type | meaning |", "|---|---|---|"]
        out += [f"| `{c.name}` | {duckdb_type(c.type)} | {_cell(c.doc)} |" for c in t.columns]
        out += [f"| `{c.name}` | {duckdb_type(c.type)} | (view only) {_cell(c.doc)} |"
                for c in VIEW_COLUMNS.get(t.name, ())]
        out.append("")
    out += _views()
    out += ["### Flag codes (also the `flag_codes` table)", "",
            "| code | severity | category | entity | description | source |",
            "|---|---|---|---|---|---|"]
    out += [f"| `{s.code}` | {s.severity} | {s.category} | {s.entity} | {_cell(s.description)} "
            f"| {_link(s.source)} |" for s in CATALOG.values()]
    return "\n".join(out) + "\n"


def _link(source: str) -> str:
    """A flag's source (docs/page.md#section) as a link from docs/data-dictionary.md."""
    target = source.removeprefix("docs/")
    return f"[{target.replace('.md#', ': ').replace('-', ' ')}]({target})"


def _views() -> list[str]:
    """The analytics views: purpose and grain from their SQL headers, columns and types from
    a warehouse built on an empty lake."""
    with tempfile.TemporaryDirectory() as tmp:
        warehouse.build(Path(tmp))
        con = warehouse.connect(Path(tmp))
        try:
            cols = con.execute(
                "SELECT table_name, column_name, data_type FROM information_schema.columns "
                "WHERE table_schema = 'main' AND (table_name LIKE 'v\\_%' ESCAPE '\\' "
                "OR table_name = 'sessions') "
                "ORDER BY table_name, ordinal_position").fetchall()
        finally:
            con.close()
    by_view: dict[str, list[str]] = {}
    for view, col, typ in cols:
        by_view.setdefault(view, []).append(f"`{col}` {typ}")
    out = ["### Analytics views", ""]
    for name, doc in warehouse.view_docs().items():
        if name in by_view:
            purpose = _cell(doc.get("purpose", ""))
            out += [f"#### `{name}`: {doc.get('grain', '')}", "", purpose[:1].upper() + purpose[1:],
                    "", "Columns: " + ", ".join(by_view[name]) + ".", ""]
    return out


def block() -> str:
    return f"{BEGIN}\n{dictionary()}{END}"


def write(page: Path) -> None:
    text = page.read_text()
    start, end = text.index(BEGIN), text.index(END) + len(END)
    page.write_text(text[:start] + block() + text[end:])


if __name__ == "__main__":
    if "--write" in sys.argv:
        write(DICTIONARY)
    else:
        print(block())
