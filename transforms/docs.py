"""The data dictionary and the flag code table as markdown, generated from the code.

`python -m transforms.docs` prints the block that README.md carries between its
`<!-- generated:dictionary -->` markers, `--write` puts it there; a test keeps the two equal.
"""

import sys
from pathlib import Path

from transforms.flags import CATALOG
from transforms.lake import duckdb_type
from transforms.schemas import TABLES

BEGIN = "<!-- generated:dictionary -->"
END = "<!-- /generated:dictionary -->"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def dictionary() -> str:
    out = ["### Tables", ""]
    for t in TABLES.values():
        out += [f"#### `{t.name}`: {t.grain}", "", "| column | type | meaning |", "|---|---|---|"]
        out += [f"| `{c.name}` | {duckdb_type(c.type)} | {_cell(c.doc)} |" for c in t.columns]
        out.append("")
    out += ["### Flag codes (also the `flag_codes` table)", "",
            "| code | severity | category | about | when | source |", "|---|---|---|---|---|---|"]
    out += [f"| `{s.code}` | {s.severity} | {s.category} | {s.entity} | {_cell(s.description)} "
            f"| {s.source} |" for s in CATALOG.values()]
    return "\n".join(out) + "\n"


def block() -> str:
    return f"{BEGIN}\n{dictionary()}{END}"


def write(readme: Path) -> None:
    text = readme.read_text()
    start, end = text.index(BEGIN), text.index(END) + len(END)
    readme.write_text(text[:start] + block() + text[end:])


if __name__ == "__main__":
    if "--write" in sys.argv:
        write(Path(__file__).resolve().parent.parent / "README.md")
    else:
        print(block())
