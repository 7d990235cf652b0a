"""What the docstrings claim, checked against the code: every docstring under transforms/ and
pipelines/ (module, class, function, and the string under a constant), sql/README.md, and the
header comments of the SQL files (paths only: their numbers are formulas).

A claim is a number with a unit or a meaning ("16 MiB", "every 20 versions", "up to 1,024",
"one ... at a time"), a path in the repo (`sql/macros/`, `transforms/lake/core.py`, a bare
`readers.py`), a folder with the names of its files (`marts/` (`v_*`)), a path in the lake
(`lake/_registry/tools.parquet`) or a module (`transforms.read.landing`, `streams.HASH_PIECE`).

- A number must equal a constant: the one the docstring documents, another constant of its
  module whose name gives the same unit (`_BYTES`, `_MS`, `_HOURS`, ...; a count any constant),
  or the one TIES names for it. Otherwise tie it in TIES, or cut the number from the docstring.
- A repo path must exist (relative to the repo, the docstring's folder or a folder above it);
  a lake path's names must be strings the code spells; a module must exist as a file, and the
  name after it must be defined there.
"""

import ast
import itertools
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from fnmatch import fnmatch
from functools import cache
from pathlib import Path
from statistics import NormalDist

from tests.conftest import REPO

PACKAGES = ("transforms", "pipelines")


def _wilson_level() -> float:
    """The confidence level of sql/macros/wilson_low.sql, in %, from the z it is written with."""
    z = float(re.findall(r"\d+\.\d+", (REPO / "sql/macros/wilson_low.sql").read_text())[0])
    return round(100 * (2 * NormalDist().cdf(z) - 1))  # z = 1.95996...: 2 * 0.975 - 1 = 95 %


Tie = str | Callable[[], float]
TIES: dict[tuple[str, str], Tie] = {
    # (file, claim as the docstring writes it, spaces collapsed) -> the code that states it: a
    # constant ("module.NAME", "module.Class.field"), or a function returning the number. A
    # claim in seconds, hours, bytes... is compared in the unit the constant's name ends with.
    ("transforms/report/charts.py", "95%"): _wilson_level,
    ("transforms/read/readers.py", "1,024 levels"): "transforms.read.jsontext.READ_DEPTH",
}

PENDING: dict[tuple[str, str], str] = {
    # Claims in files being rewritten (the storage protocol): not tied to code, left for the
    # rewrite. A pair no longer found fails the test: take it out of this table.
    ("transforms/block_scheduler.py", "~0.5 s"): "a measured import time",
    ("transforms/warehouse/sqlfiles.py", "~0.4 s"): "a measured parse time",
}

NOT_IN_REPO = {
    # Names a docstring gives that are a user's, a run's or a library's files, not the repo's.
    "tools.json", "tools.yaml", "_delta_log/",
}

SIZE = {"B": 1, "bytes": 1, "byte": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9,
        "KiB": 2**10, "MiB": 2**20, "GiB": 2**30}
TIME = {"ns": 1e-9, "µs": 1e-6, "ms": 1e-3, "s": 1, "second": 1, "seconds": 1, "minute": 60,
        "minutes": 60, "hour": 3600, "hours": 3600, "day": 86400, "days": 86400,
        "week": 7 * 86400, "weeks": 7 * 86400, "year": 365 * 86400, "years": 365 * 86400}
COUNT = ("%", "versions?", "files?", "times", "levels?", "lines?", "runs?", "rows?",
         "characters?", "workers?", "processes", "tries", "attempts?", "retries",
         "blocks?", "pieces?", "parts?", "entries", "items?", "queries", "calls?")
SUFFIX = {"_BYTES": ("size", 1), "_MS": ("time", 1e-3), "_S": ("time", 1),
          "_SECONDS": ("time", 1), "_MINUTES": ("time", 60), "_HOURS": ("time", 3600),
          "_DAYS": ("time", 86400)}
"""A constant's unit, from how its name ends; a constant without one holds bytes or a count."""

_UNIT = "|".join([*(re.escape(u) for u in sorted(SIZE, key=len, reverse=True)),
                  *(re.escape(u) for u in sorted(TIME, key=len, reverse=True)), *COUNT])
_NUM = r"(?<![\w.,/$^+-])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)"
_QUAL = r"(?:(?:every|more than|fewer than|less than|up to|at most|at least|over|under|below)\s)"
_BARE_QUAL = r"(?:(?:every|more than|fewer than|less than|up to|at most|at least)\s)"
WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
         "eight": 8, "nine": 9, "ten": 10}
NUMBER = re.compile(
    rf"(?P<q>{_QUAL})?~?{_NUM}(?:\s|-)?(?P<unit>{_UNIT})(?:/s)?(?![\w/])"
    rf"|(?P<q2>{_BARE_QUAL})~?(?P<bare>\d{{1,3}}(?:,\d{{3}})+|\d+(?:\.\d+)?)(?![\w.,])"
    rf"|\b(?P<word>{'|'.join(WORDS)})\s(?:\w+\s){{0,3}}(?:at a time|at once)\b", re.I)
PATH = re.compile(r"(?<![\w/.<$*:-])((?:[\w.\-]+/)+(?:[\w.\-]+)?|[\w\-]+\."
                  r"(?:py|sql|md|yaml|yml|html|css|toml))(?![\w/<*$-])")
FOLDER_NAMES = re.compile(r"`([\w/]+/)` \(`([\w*]+)`\)")
MODULE = re.compile(r"(?<![\w./-])([a-z_][a-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+)(?![\w(/-])")
RUNTIME_ROOTS = ("lake/", "RUNLAKE_HOME/lake/")
SKIP = {"node_modules", "__pycache__", "tmp-home"}
EXTENSIONS = {"py", "sql", "md", "yaml", "yml", "html", "css", "toml", "json", "jsonl",
              "parquet", "duckdb", "gz", "zst", "eval", "traj", "txt", "csv", "lock"}
"""A dotted name ending so is a file's name, not a module's."""


@dataclass(frozen=True)
class Doc:
    path: str
    line: int
    text: str
    constant: str | None = None
    """The constant the docstring stands under (`NAME` or `Class.NAME`), if any."""
    numbers: bool = True
    end: int = 0
    """The docstring's last line in its file."""


def _module_docs(rel: str, tree: ast.Module) -> Iterator[Doc]:
    """The docstrings of a module, its classes and functions (nested too), and the strings
    under its constants and class fields, without walking every node of the tree."""
    todo: list[ast.AST] = [tree]
    while todo:
        node = todo.pop()
        assert isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        text = ast.get_docstring(node)
        if text:
            first = node.body[0]
            yield Doc(rel, first.lineno, text, end=first.end_lineno or first.lineno)
        owner = node.name + "." if isinstance(node, ast.ClassDef) else ""
        todo += [a for a in node.body
                 if isinstance(a, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)]
        for a, b in itertools.pairwise(node.body):
            if isinstance(a, ast.Assign | ast.AnnAssign) and isinstance(b, ast.Expr) \
                    and isinstance(b.value, ast.Constant) and isinstance(b.value.value, str) \
                    and not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                target = a.targets[0] if isinstance(a, ast.Assign) else a.target
                name = owner + target.id if isinstance(target, ast.Name) else None
                yield Doc(rel, b.lineno, b.value.value, name, end=b.end_lineno or b.lineno)


def docs() -> Iterator[Doc]:
    for package in PACKAGES:
        for f in sorted((REPO / package).rglob("*.py")):
            yield from _module_docs(str(f.relative_to(REPO)), _parse(f))
    yield Doc("sql/README.md", 1, (REPO / "sql/README.md").read_text())
    for f in sorted((REPO / "sql").rglob("*.sql")):
        head = []
        for line in f.read_text().splitlines():
            if not line.startswith("--"):
                break
            head.append(line[2:])
        yield Doc(str(f.relative_to(REPO)), 1, "\n".join(head), numbers=False)


@cache
def _parse(f: Path) -> ast.Module:
    return ast.parse(f.read_text())


def _value(node: ast.expr, known: dict[str, float]) -> float | None:
    """The number a constant's expression makes (literals, arithmetic, earlier constants,
    a pydantic Field's default), or None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float) \
            and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.Name):
        return known.get(node.id)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = _value(node.operand, known)
        return None if v is None else -v
    if isinstance(node, ast.BinOp):
        left, right = _value(node.left, known), _value(node.right, known)
        ops: dict[type, Callable[[float, float], float]] = {
            ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
            ast.Mult: lambda a, b: a * b, ast.Div: lambda a, b: a / b,
            ast.FloorDiv: lambda a, b: a // b, ast.Pow: lambda a, b: a ** b,
            ast.LShift: lambda a, b: int(a) << int(b)}
        op = ops.get(type(node.op))
        return None if left is None or right is None or op is None else op(left, right)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Field":
        default = node.args[0] if node.args else next(
            (k.value for k in node.keywords if k.arg == "default"), None)
        return None if default is None else _value(default, known)
    return None


@cache
def constants(module_file: Path) -> dict[str, float]:
    """The numeric constants of a module: `NAME` at the top, `Class.NAME` in a class body."""
    found: dict[str, float] = {}

    def scan(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
                target = node.targets[0] if isinstance(node, ast.Assign) else node.target
                if isinstance(target, ast.Name):
                    v = _value(node.value, found)
                    if v is not None:
                        found[prefix + target.id] = v
            elif isinstance(node, ast.ClassDef) and not prefix:
                scan(node.body, node.name + ".")

    scan(_parse(module_file).body, "")
    return found


@cache
def defined(module_file: Path) -> frozenset[str]:
    """The names a module defines at its top (functions, classes, constants, imports)."""
    names: set[str] = set()
    body = list(_parse(module_file).body)
    for node in body:
        if isinstance(node, ast.If):  # `if TYPE_CHECKING:` imports, served by __getattr__
            body += node.body + node.orelse
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return frozenset(names)


def module_file(dotted: list[str], base: Path) -> Path | None:
    """The file of module `dotted` under `base`: a .py file or a package's __init__.py."""
    f = base.joinpath(*dotted)
    for candidate in (f.with_name(f.name + ".py"), f / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def resolve_constant(dotted: str) -> float | None:
    parts = dotted.split(".")
    for n in range(len(parts) - 1, 0, -1):
        f = module_file(parts[:n], REPO)
        if f is not None:
            return constants(f).get(".".join(parts[n:]))
    return None


def _unit(name: str) -> tuple[str, float] | None:
    return next((u for s, u in SUFFIX.items() if name.upper().endswith(s)), None)


@dataclass(frozen=True)
class Number:
    text: str
    value: float
    kind: str  # "size" (value in bytes), "time" (seconds) or "count" (as written)
    written: float


def numbers(text: str) -> Iterator[Number]:
    flat = " ".join(text.split())
    for m in NUMBER.finditer(flat):
        claim = m.group(0)
        if m["word"]:
            n = WORDS[m["word"].lower()]
            yield Number(claim, n, "count", n)
            continue
        digits = m.group(2) if m.group(2) is not None else m["bare"]
        written = float(digits.replace(",", ""))
        unit = m["unit"] or ""
        if unit in SIZE:
            yield Number(claim, written * SIZE[unit], "size", written)
        elif unit in TIME:
            yield Number(claim, written * TIME[unit], "time", written)
        else:
            yield Number(claim, written, "count", written)


def _same(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b), 1)


def _matches(n: Number, name: str, value: float) -> bool:
    unit = _unit(name)
    if n.kind == "count":
        return _same(n.written, value)
    if unit is None:  # a size without a unit in its name is in bytes
        return n.kind == "size" and _same(n.value, value)
    return unit[0] == n.kind and _same(n.value / unit[1], value)


def check_number(doc: Doc, n: Number) -> str | None:
    """None when the claim is tied to code, else what is wrong."""
    where = f"{doc.path}:{doc.line}: {n.text!r}"
    tie = TIES.get((doc.path, n.text))
    if tie is not None:
        value = tie() if callable(tie) else resolve_constant(tie)
        if value is None:
            return f"{where}: TIES names {tie}, which is not a numeric constant"
        name = tie if isinstance(tie, str) else ""
        if not (_matches(n, name, value) or (n.kind != "count" and _same(n.written, value))):
            return f"{where}: the code says {value:g} ({tie if name else 'TIES'})"
        return None
    if (doc.path, n.text) in PENDING:
        return None
    own = constants(REPO / doc.path) if doc.path.endswith(".py") else {}
    if doc.constant is not None and doc.constant in own:
        value = own[doc.constant]
        if _matches(n, doc.constant, value) or (_unit(doc.constant) is None
                                                and _same(n.written, value)):
            return None
    if any(_matches(n, name, v) for name, v in own.items()):
        return None
    return (f"{where}: no constant of the module states it; tie it to a constant in TIES "
            "(tests/test_docstring_claims.py), or cut the number from the docstring")


@cache
def _repo_names() -> tuple[frozenset[str], frozenset[str]]:
    """The names of the repo's files, and of its folders (tools' and caches' folders left out)."""
    files: set[str] = set()
    folders: set[str] = set()
    for _, dirs, names in os.walk(REPO):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in SKIP]
        folders.update(dirs)
        files.update(names)
    return frozenset(files), frozenset(folders)


@cache
def code_text() -> str:
    """The source of transforms/ without its docstrings and comment lines: what the code spells."""
    out = []
    for f in sorted((REPO / "transforms").rglob("*.py")):
        lines = f.read_text().splitlines()
        for doc in _module_docs("", _parse(f)):
            lines[doc.line - 1:doc.end] = [""] * (doc.end - doc.line + 1)
        out += [line for line in lines if not line.lstrip().startswith("#")]
    return "\n".join(out)


def _fixed(path: str) -> list[str]:
    """The path's names up to the first placeholder (<table>, YYYY-MM-DD, ..., *)."""
    out = []
    for part in path.strip("/").split("/"):
        if re.search(r"[<>*{}]|YYYY|\.\.\.|\bDAY\b", part) or not part:
            break
        out.append(part)
    return out


def check_path(doc: Doc, path: str, backticked: bool) -> str | None:
    path = path.rstrip(".,;:")
    where = f"{doc.path}:{doc.line}: {path!r}"
    here = (REPO / doc.path).parent
    bases = [REPO, *[p for p in [here, *here.parents] if p.is_relative_to(REPO) and p != REPO]]
    fixed = _fixed(path)
    if not fixed:
        return None
    if "/" not in path.rstrip("/"):
        if path in NOT_IN_REPO:
            return None
        if path.endswith("/"):  # a folder: strict when the docstring marks it as a name
            if not backticked or any((b / fixed[0]).is_dir() for b in bases) \
                    or any(p.name == fixed[0] for p in here.rglob(fixed[0]) if p.is_dir()):
                return None
            return f"{where}: no such folder in or above {here.relative_to(REPO)}/"
        if path in _repo_names()[0]:
            return None
        return f"{where}: no file of that name in the repo (or add it to NOT_IN_REPO)"
    if any(b.joinpath(*fixed).exists() for b in bases):
        if path.endswith("/") and len(fixed) == len(path.strip("/").split("/")) \
                and not any(b.joinpath(*fixed).is_dir() for b in bases):
            return f"{where}: not a folder"
        return None
    if path.startswith(RUNTIME_ROOTS) and len(fixed) > 1:
        names = fixed[1:] if fixed[0] == "lake" else fixed[2:]
        missing = [n for n in names if not re.search(rf"[\"'/{{}}]{re.escape(n)}\b", code_text())]
        return f"{where}: the code spells no {', '.join(missing)}" if missing else None
    if any((b / fixed[0]).is_dir() for b in bases):
        return f"{where}: no such path in the repo"
    return None  # not a path of the repo (a URL's, a landing folder's, "pass/fail")


def check_module(doc: Doc, dotted: str) -> str | None:
    parts = dotted.split(".")
    here = (REPO / doc.path).parent
    bases = [REPO] if parts[0] in PACKAGES else \
        [p for p in [here, *here.parents] if p.is_relative_to(REPO / "transforms")
         or p.is_relative_to(REPO / "pipelines")]
    for base in bases:
        if module_file(parts[:1], base) is None:
            continue
        for n in range(len(parts), 0, -1):
            f = module_file(parts[:n], base)
            if f is None:
                continue
            rest = parts[n:]
            if not rest or rest[0] in defined(f):
                return None
            return f"{doc.path}:{doc.line}: {dotted!r}: {f.relative_to(REPO)} defines no {rest[0]}"
    if parts[0] in PACKAGES:
        return f"{doc.path}:{doc.line}: {dotted!r}: no such module"
    return None  # not a module of runlake's (gen_ai.agent.name, info.model_stats)


def check_folder_names(doc: Doc) -> Iterator[str]:
    """`folder/` (`prefix_*`): every SQL file of the folder is named so."""
    here = (REPO / doc.path).parent
    for folder, pattern in FOLDER_NAMES.findall(doc.text):
        files = sorted((here / folder).glob("*.sql"))
        odd = [f.name for f in files if not fnmatch(f.stem, pattern)]
        if odd:
            yield (f"{doc.path}: {folder} ({pattern}): {len(odd)} of its {len(files)} files "
                   f"are named otherwise ({', '.join(odd[:4])}, ...)")


def problems(doc: Doc) -> Iterator[str]:
    flat = " ".join(doc.text.split())
    if doc.numbers:
        for n in numbers(doc.text):
            found = check_number(doc, n)
            if found:
                yield found
    ticked = set(re.findall(r"`([^`]+)`", flat))
    for m in PATH.finditer(flat):
        if re.match(r"[a-z]+://", flat[max(0, m.start() - 12):m.start() + 3]) \
                or "://" in flat[max(0, m.start() - 16):m.start()]:
            continue  # a URL's path
        found = check_path(doc, m.group(1), m.group(1) in ticked)
        if found:
            yield found
    for m in MODULE.finditer(flat):
        if m.group(1).rsplit(".", 1)[-1] in EXTENSIONS:
            continue
        if m.group(1) in ticked or m.group(1).startswith(PACKAGES):
            found = check_module(doc, m.group(1))
            if found:
                yield found
    yield from check_folder_names(doc)


def test_every_docstring_claim_is_tied_to_code() -> None:
    found = [p for d in docs() for p in problems(d)]
    assert not found, "\n".join(found)


def test_tables_name_claims_that_exist() -> None:
    """An entry of TIES or PENDING whose claim no docstring makes any more is taken out."""
    made = {(d.path, n.text) for d in docs() if d.numbers for n in numbers(d.text)}
    stale = sorted(set(TIES) - made) + sorted(set(PENDING) - made)
    assert not stale, f"no docstring makes these claims any more; remove them: {stale}"
