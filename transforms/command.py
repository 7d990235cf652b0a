"""The `runlake` executable: `transforms.cli.main`, imported only here, so that Ctrl-C at any
moment (while the command line still imports its libraries, too) ends with one line and exit
status 130, never a traceback."""

import sys


def main() -> None:
    try:
        from transforms.cli import main as run

        run()
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(130)
