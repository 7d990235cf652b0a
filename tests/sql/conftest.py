"""The samples' lake for the tests that run the views elsewhere: the session's shared one
(tests/conftest.py `samples_lake`, read only)."""

from pathlib import Path

import pytest

from tests.conftest import SAMPLES, SamplesLake

__all__ = ["SAMPLES"]


@pytest.fixture(scope="module")
def samples_home(samples_lake: SamplesLake) -> Path:
    return samples_lake.home
