"""User-facing errors: each message says what is wrong and what to do; the CLI prints it as
one line and exits non-zero, never with a traceback."""


class RunlakeError(Exception):
    """A problem the user can act on."""


class InputError(RunlakeError):
    """A problem with the inputs: a missing path, an unknown kind, ..."""


class LakeBusy(RunlakeError):
    """Another writer holds the warehouse."""


class WarehouseError(RunlakeError):
    """The views could not be built; the message names the SQL file."""


class NoWarehouse(FileNotFoundError):
    """A home with no lake yet: nothing to read until an ingest makes one."""

    def __init__(self, target: object) -> None:
        super().__init__(f"no warehouse at {target}: run `runlake ingest PATH` first")
        self.target = target

    def __reduce__(self) -> tuple[type, tuple[object]]:  # pickled as made: from its target
        return NoWarehouse, (self.target,)
