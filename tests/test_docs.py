"""The README's data dictionary and flag table are the ones the code declares."""

from tests.conftest import REPO
from transforms.docs import BEGIN, END, block


def test_readme_dictionary_is_current() -> None:
    """Regenerate with `python -m transforms.docs` when a schema or flag changes."""
    text = (REPO / "README.md").read_text()
    assert BEGIN in text and END in text
    start = text.index(BEGIN)
    assert text[start:text.index(END) + len(END)] == block()
