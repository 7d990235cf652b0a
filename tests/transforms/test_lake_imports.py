"""Every module of the lake imports first, on its own: `import transforms.lake.commit`
in a fresh process used to fail with a circular import (commit -> the package -> core ->
commit)."""

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MODULES = sorted(p.stem for p in (REPO / "transforms" / "lake").glob("*.py")
                 if p.stem != "__init__")


@pytest.mark.parametrize("module", MODULES)
def test_a_lake_module_imports_on_its_own(module: str) -> None:
    done = subprocess.run([sys.executable, "-c", f"import transforms.lake.{module}"],
                          capture_output=True, text=True, cwd=REPO, timeout=60)
    assert done.returncode == 0, done.stderr[-1500:]
