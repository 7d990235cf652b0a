"""`python -m pipelines.dev ARGS...`: `dagster dev ARGS...`, as `make dev` runs it, that SIGTERM
and SIGINT stop (its webserver and daemon with it) however it was started.

dagster dev makes SIGTERM do whatever SIGINT does (dagster._utils.interrupts). A process that
a non-interactive shell starts in the background (`make dev &` in a script) inherits SIGINT
ignored, so dagster dev then ignored SIGTERM too and ran on. This puts both signals back to
their defaults and becomes dagster dev (exec: the same process, which make's SIGTERM reaches)."""

import os
import signal
import sys
from pathlib import Path


def main(argv: list[str]) -> None:
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)
    dagster = Path(sys.executable).with_name("dagster")
    os.execv(dagster, [str(dagster), "dev", *argv])


if __name__ == "__main__":
    main(sys.argv[1:])
