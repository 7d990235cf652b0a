"""docs/dependencies.md names each runtime dependency of pyproject.toml once, with its reason,
and the product uses each (none is left over from code that is gone)."""

import re
import tomllib

from tests.conftest import REPO

MODULE = {"pyyaml": "yaml", "pydantic-settings": "pydantic_settings",
          "opentelemetry-proto": "opentelemetry.proto"}
"""Import names that are not the package's name with - as _."""

NOT_IMPORTED = {"dagster-webserver": "dagster dev"}
"""Used as a program rather than imported: what the Makefile runs for it."""


def _runtime() -> list[str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    return [re.split(r"[<>=!~\[; ]", d, maxsplit=1)[0].lower() for d in project["dependencies"]]


def test_each_runtime_dependency_is_documented_once() -> None:
    text = (REPO / "docs" / "dependencies.md").read_text()
    listed = re.findall(r"^\| `([a-z0-9_.-]+)` \| \S", text, re.MULTILINE)
    assert sorted(listed) == sorted(_runtime())


def test_each_runtime_dependency_is_used() -> None:
    code = "\n".join(p.read_text() for folder in ("transforms", "pipelines")
                     for p in (REPO / folder).rglob("*.py"))
    makefile = (REPO / "Makefile").read_text()
    unused = []
    for package in _runtime():
        if package in NOT_IMPORTED:
            if NOT_IMPORTED[package] not in makefile:
                unused.append(package)
            continue
        module = MODULE.get(package, package.replace("-", "_"))
        if not re.search(rf"^\s*(import|from) {module}\b", code, re.MULTILINE):
            unused.append(package)
    assert unused == []
