"""The input kinds: each a module of transforms.kinds implementing the Format protocol, all of
them in one registry that the readers, the workers and the CLI derive from."""

import re
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest

from transforms import kinds
from transforms.contracts.flags import CATALOG
from transforms.kinds import INPUT_FORMATS, KINDS, TOOL_CHECKED_KINDS, Format, kind_by_suffix
from transforms.normalize.columns import ColumnBuffers
from transforms.read.readers import InputFile

NORMALIZE = Path(__file__).parents[2] / "transforms" / "normalize"


def test_every_kind_module_is_in_the_registry() -> None:
    """Each module of transforms/kinds/ but the protocol's is one kind, named for its file."""
    folder = Path(__file__).parents[2] / "transforms" / "kinds"
    modules = {p.stem for p in folder.glob("*.py") if not p.stem.startswith("_")} - {"format"}
    assert modules == set(KINDS)
    assert KINDS[0] == "responses"  # what --help lists first
    assert set(TOOL_CHECKED_KINDS) == {"responses", "durable"}


@pytest.mark.parametrize("name", KINDS)
def test_a_kind_is_a_format(name: str, tmp_path: Path) -> None:
    """Every field of the protocol is there, its flags are in the catalog, and its normalizer
    reads records into buffers (a record of no kind is refused with a reason, not raised)."""
    fmt: Format = INPUT_FORMATS[name]
    assert fmt.name == name and fmt.help and fmt.suffixes
    assert all(s == s.lower() for s in (*fmt.suffixes, *fmt.document_endings))
    assert all(kind_by_suffix("x" + s) == name for s in fmt.suffixes)
    assert set(fmt.flags) <= set(CATALOG), set(fmt.flags) - set(CATALOG)
    assert len(set(fmt.flags)) == len(fmt.flags)
    buffers = ColumnBuffers()
    norm = fmt.normalizer("x" + fmt.suffixes[0], date(2026, 11, 20), buffers)
    assert norm.add(1, b'{"nothing": 1}', {"nothing": 1}) is not None
    assert norm.days == set()


def test_every_flag_a_normalizer_raises_belongs_to_a_kind() -> None:
    """A code named in the normalizers' source is listed by the kind that raises it (codes
    derived in the warehouse, over several lines, are no kind's)."""
    source = "\n".join(p.read_text() for p in NORMALIZE.glob("*.py"))
    source += (NORMALIZE.parent / "contracts" / "registry.py").read_text()
    raised = {code for code in CATALOG if re.search(rf"[\"']{code}[\"']", source)}
    listed = {code for fmt in INPUT_FORMATS.values() for code in fmt.flags}
    assert raised == listed, (raised - listed, listed - raised)


def test_the_reader_of_a_kind_tells_a_whole_document() -> None:
    """A durable *.json file is one document; a *.durable.jsonl file, and any other kind's
    file, is read line by line."""
    def whole(name: str, kind: str) -> bool:
        return InputFile(Path(name), name, kind, "none", 0).whole_document

    assert whole("a.durable.json", "durable") and whole("durable/a.json", "durable")
    assert not whole("a.durable.jsonl", "durable")
    assert not whole("a.json", "responses") and not whole("a.json", None)


def test_the_registry_loads_no_normalizer() -> None:
    """Importing the kinds (as `runlake --help` does) loads none of their normalizers."""
    code = ("import sys, transforms.kinds; "
            "print([m for m in sys.modules if m.startswith('transforms.normalize')])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]"


def test_the_file_names_that_tell_the_kinds_are_listed_from_the_registry() -> None:
    assert kinds.file_patterns() == (
        "*.responses.jsonl, *.spans.jsonl, *.otlp.jsonl, *.durable.json[l]")
