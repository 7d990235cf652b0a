"""The input kinds runlake reads, one module each, and the one registry they all derive from.

An input kind is a `Format` (transforms.kinds.format): its name, the file names it is told by,
how its files are read (lines, or one whole document), its normalizer, the flag codes that
normalizer raises and the line --help gives it. Every module of this package that defines
`FORMAT` is a kind: the readers' suffix and folder rules (transforms.read.readers), the
workers' normalizers (transforms.normalize.worker), `runlake validate` and the CLI's --kind
choices all come from INPUT_FORMATS. Adding a kind is adding one module here, with its tests
(docs/contributing.md, "Adding an input kind").

Importing this package loads only the kinds' descriptions: each loads its normalizer when a
file of its kind is read, so `runlake --help` stays fast.
"""

import importlib
import pkgutil

from transforms.kinds.format import Format, Normalizer

_NOT_KINDS = frozenset({"format"})


def _discover() -> dict[str, Format]:
    found: list[Format] = []
    for module in pkgutil.iter_modules(__path__):
        if module.name.startswith("_") or module.name in _NOT_KINDS:
            continue
        fmt = getattr(importlib.import_module(f"{__name__}.{module.name}"), "FORMAT", None)
        if fmt is not None:
            found.append(fmt)
    found.sort(key=lambda f: (f.order, f.name))
    return {f.name: f for f in found}


INPUT_FORMATS: dict[str, Format] = _discover()
"""Every input kind by name, in the order --help and the docs list them."""

KINDS: tuple[str, ...] = tuple(INPUT_FORMATS)
"""The kinds' names: what `--kind` accepts, the folder names that tell a file's kind, and
`ingest_files.kind`."""

TOOL_CHECKED_KINDS: tuple[str, ...] = tuple(
    name for name, f in INPUT_FORMATS.items() if f.checks_tools)
"""Kinds whose tool calls are checked against a tool registry."""


def kind_by_suffix(name: str) -> str | None:
    """The kind whose file-name ending `name` (lower case, without .gz/.zst) has, if any."""
    for fmt in INPUT_FORMATS.values():
        if name.endswith(fmt.suffixes):
            return fmt.name
    return None


def file_patterns() -> str:
    """The file names that tell the kinds, as messages show them: `*.responses.jsonl, ...`,
    a suffix and the same with an `l` after it as one (`*.durable.json[l]`)."""
    shown = []
    for fmt in INPUT_FORMATS.values():
        left = list(fmt.suffixes)
        while left:
            suffix = left.pop(0)
            if suffix + "l" in left:
                left.remove(suffix + "l")
                shown.append(f"*{suffix}[l]")
            else:
                shown.append(f"*{suffix}")
    return ", ".join(shown)


__all__ = ["INPUT_FORMATS", "KINDS", "TOOL_CHECKED_KINDS", "Format", "Normalizer",
           "file_patterns", "kind_by_suffix"]
