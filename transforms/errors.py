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
