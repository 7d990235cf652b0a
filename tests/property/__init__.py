"""Property tests (hypothesis). Each test's `max_examples` is its budget in `make test`;
`HYPOTHESIS_PROFILE=thorough` multiplies every budget by 10 (e.g. before a release, or after
a change to the readers or the line rule): `HYPOTHESIS_PROFILE=thorough make test`."""

import os

THOROUGH = os.environ.get("HYPOTHESIS_PROFILE") == "thorough"


def examples(n: int) -> int:
    """A test's number of examples: `n`, or 10 times `n` under the thorough profile."""
    return n * 10 if THOROUGH else n
