"""What an input kind is: the `Format` protocol every module of transforms.kinds implements,
the `Normalizer` protocol of what its files' records become, and `KindFormat`, the Format of a
kind whose normalizer is one class."""

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Any, Protocol, cast

if TYPE_CHECKING:
    from transforms.contracts.registry import Registry


class RowBuffers(Protocol):
    """What a normalizer adds its rows to (transforms.normalize.columns.ColumnBuffers): the
    kinds sit below the normalizers, so they name only what a normalizer asks of it."""

    def adder(self, table: str, **fixed: Any) -> Callable[..., None]:
        """The function that adds a row of `table`, its columns given by name."""
        ...


class Normalizer(Protocol):
    """Turns the records of one source file into rows of the lake's tables."""

    days: set[date]
    """The days the rows added so far belong to."""

    def add(self, line: int, raw: bytes, obj: dict[str, Any]) -> str | None:
        """Append the rows of one record (a parsed JSON object); None when it was read, else
        why it is not a record of this kind (the line is then quarantined with that reason)."""
        ...


class Format(Protocol):
    """One input kind: how its files are told, read, normalized, checked and explained."""

    name: str
    """The kind: what --kind accepts, the folder name that tells it, `ingest_files.kind`."""
    suffixes: tuple[str, ...]
    """File-name endings (lower case, before any .gz or .zst) that make a file this kind."""
    document_endings: tuple[str, ...]
    """The reader: a file of this kind whose name ends so holds one whole document (read as
    line 1, newlines and all); any other file of the kind is read line by line."""
    flags: tuple[str, ...]
    """The flag codes (transforms.contracts.flags.CATALOG) its normalizer raises."""
    checks_tools: bool
    """Whether its runs' tool calls are checked against a tool registry (--tools)."""
    help: str
    """One line for `runlake ingest --help` and `runlake validate --help`."""
    order: int
    """Where --help and the docs list it among the kinds (lower first)."""

    def normalizer(self, source_file: str, fallback_day: date, buffers: RowBuffers,
                   registry: "Registry | None" = None) -> Normalizer:
        """A normalizer for the records of one source file, appending to `buffers`; records
        without a day of their own get `fallback_day`. `registry`, when the kind checks
        tools: the tool registry to check its tool calls against."""
        ...

    def load(self) -> None:
        """Import what reading a file of the kind needs, now: the worker module does it for
        every kind, so that the fork server imports it once for all its workers."""
        ...


@dataclass(frozen=True)
class KindFormat:
    """A `Format` whose normalizer is a class taking (source_file, fallback_day, buffers), named
    as `module:Class` and imported when the first file of the kind is read; when the kind
    checks tools, the class has `use_registry(registry)`."""

    name: str
    suffixes: tuple[str, ...]
    flags: tuple[str, ...]
    help: str
    order: int
    normalizer_class: str
    """`module:Class` of the normalizer."""
    document_endings: tuple[str, ...] = ()
    checks_tools: bool = False

    def normalizer(self, source_file: str, fallback_day: date, buffers: RowBuffers,
                   registry: "Registry | None" = None) -> Normalizer:
        norm = self.load()(source_file, fallback_day, buffers)
        if self.checks_tools:
            norm.use_registry(registry)
        return cast(Normalizer, norm)

    def load(self) -> Any:
        """The normalizer class, imported on first use."""
        module, _, cls = self.normalizer_class.partition(":")
        return getattr(importlib.import_module(module), cls)
