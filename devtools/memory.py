"""The resident memory of a process and all its descendants, as the benchmarks and the memory
tests measure it: an ingest's workers count with the process that started them."""

import threading
from pathlib import Path
from types import TracebackType


def tree_rss_kb(pid: int) -> int:
    """Resident memory of `pid` and all its descendants, in kB."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
            for children in Path(f"/proc/{p}/task").glob("*/children"):
                todo += [int(c) for c in children.read_text().split()]
        except OSError:
            pass
    return total


class PeakSampler:
    """The peak of `tree_rss_kb(pid)`, sampled every `every` seconds while the block runs."""

    def __init__(self, pid: int, every: float = 0.05) -> None:
        self.pid = pid
        self.every = every
        self.peak_kb = 0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._done.is_set():
            self.peak_kb = max(self.peak_kb, tree_rss_kb(self.pid))
            self._done.wait(self.every)

    def __enter__(self) -> "PeakSampler":
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._done.set()
        self._thread.join()

    @property
    def peak_mb(self) -> float:
        return self.peak_kb / 1024
