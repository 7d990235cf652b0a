"""The samples ingested once per module, for the tests that run the views elsewhere."""

from pathlib import Path

import pytest

from tests.conftest import REPO
from transforms.ingest import ingest

SAMPLES = REPO / "data_samples"


@pytest.fixture(scope="module")
def samples_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    h = tmp_path_factory.mktemp("samples") / "home"
    ingest([SAMPLES], h, tools=SAMPLES / "tools.yaml")
    return h
