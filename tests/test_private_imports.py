"""No module of runlake reaches into another's private names: every `.py` under transforms/,
pipelines/, bench/, devtools/ and tests/ is parsed, and `from X import _name` or `X._name`
where X is another of runlake's own modules fails the test. What one module shares with
another is public; a module's own names, dunder names and other libraries' names are not
this test's business."""

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ROOTS = ("transforms", "pipelines", "bench", "devtools", "tests")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_module(dotted: str) -> bool:
    """Whether `dotted` names one of runlake's modules or packages (a file or a folder)."""
    if dotted.split(".")[0] not in ROOTS:
        return False
    base = REPO.joinpath(*dotted.split("."))
    return base.with_suffix(".py").is_file() or base.is_dir()


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _resolve(node: ast.ImportFrom, here: str, is_package: bool) -> str:
    """The absolute module an import names (a relative one from the importing module)."""
    if not node.level:
        return node.module or ""
    package = here.split(".") if is_package else here.split(".")[:-1]
    package = package[:len(package) - (node.level - 1)]
    return ".".join([*package, *([node.module] if node.module else [])])


def _dotted(node: ast.expr) -> list[str] | None:
    """`a.b.c` as ["a", "b", "c"]; None for anything but names and attributes."""
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return None if inner is None else [*inner, node.attr]
    return None


def offenders(path: Path) -> list[str]:
    """Each private name of another runlake module that `path` imports or reads, as
    `path:line: what`."""
    return offenders_in(path.read_text(encoding="utf-8"), _module_name(path),
                        path.name == "__init__.py", str(path.relative_to(REPO)))


def offenders_in(source: str, here: str, is_package: bool, where: str) -> list[str]:
    """As offenders, for the source of module `here`."""
    tree = ast.parse(source, where)
    modules: dict[str, str] = {}  # a local name bound to a runlake module: its dotted name
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    modules[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    modules[top] = top
        elif isinstance(node, ast.ImportFrom):
            source = _resolve(node, here, is_package)
            if not _is_module(source):
                continue
            for alias in node.names:
                full = f"{source}.{alias.name}"
                if _is_module(full):
                    modules[alias.asname or alias.name] = full
                if _private(alias.name) and source != here:
                    found.append(f"{where}:{node.lineno}: from {source} import {alias.name}")
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute) or not _private(node.attr):
            continue
        chain = _dotted(node.value)
        if chain is None or chain[0] not in modules:
            continue
        owner = ".".join([modules[chain[0]], *chain[1:]])
        if _is_module(owner) and owner != here:
            found.append(f"{where}:{node.lineno}: {owner}.{node.attr}")
    return found


def test_no_module_reads_another_modules_private_names() -> None:
    found = [x for root in ROOTS for path in sorted((REPO / root).rglob("*.py"))
             for x in offenders(path)]
    assert not found, "private names read across runlake's modules:\n" + "\n".join(found)


def test_the_check_sees_both_kinds() -> None:
    """The check itself: an import of a private name, and a private attribute of a module;
    not a module's own names, nor dunder names."""
    source = ("from transforms.cli.app import _hidden\n"
              "from transforms.report import nightly\n"
              "import transforms.cli.app as app\n"
              "from . import _sibling\n"
              "nightly._cache\napp._one\nnightly.__doc__\n")
    said = [x.split(": ", 1)[1] for x in offenders_in(source, "tests.sample", False, "s.py")]
    assert said == ["from transforms.cli.app import _hidden", "from tests import _sibling",
                    "transforms.report.nightly._cache", "transforms.cli.app._one"], said
    own = "from transforms.cli.app import _hidden\nimport transforms.cli.app as a\na._x\n"
    assert offenders_in(own, "transforms.cli.app", False, "app.py") == []
