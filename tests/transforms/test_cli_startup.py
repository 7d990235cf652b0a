"""`runlake --help` starts without the heavy libraries: each command imports what it needs when
it runs (the time itself is measured in bench/, not here)."""

import subprocess
import sys

from tests.conftest import SamplesLake
from transforms.cli.query import cell

HEAVY = ("polars", "pyarrow", "deltalake", "dagster", "jinja2", "sqlglot", "duckdb", "pydantic",
         "orjson", "yaml")


def test_the_command_line_loads_no_heavy_library() -> None:
    code = ("import sys, transforms.cli; "
            f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True).stdout.strip()
    assert loaded == "", f"importing transforms.cli loads {loaded}"


def test_help_names_every_command_and_import_format() -> None:
    from typer.testing import CliRunner

    from transforms.cli import app
    from transforms.importers import FORMATS
    from transforms.importers.known import IMPORTERS, KNOWN, Importer

    # IMPORTERS is made from FORMATS and KNOWN: both name every importer, once.
    known = [i.name for i in KNOWN if isinstance(i, Importer)]
    assert sorted(known) == sorted(FORMATS)
    assert list(FORMATS) == list(IMPORTERS)
    assert all(FORMATS[n] == i.describe for n, i in IMPORTERS.items())
    result = CliRunner().invoke(app, ["import", "--help"])
    assert result.exit_code == 0
    assert all(name in result.output for name in FORMATS)


def test_table_cells_round_floats() -> None:
    assert cell(0.7605633802816901) == "0.7606"
    assert cell(10601.083333333334) == "10601.08"
    assert cell(12.0) == "12"
    assert cell(0.0) == "0"
    assert cell(None) == "NULL"
    assert cell(3) == "3"
    assert cell(float("nan")) == "nan"


def test_a_query_opens_the_warehouse_without_the_lake_libraries(samples_lake: SamplesLake
                                                               ) -> None:
    """`runlake sql` on a published warehouse (the session's samples lake, read only): duckdb,
    and not pyarrow, deltalake, sqlglot, polars or yaml (the lake and warehouse packages load
    those parts on first use)."""
    home = samples_lake.home
    code = ("import sys; from transforms.cli import main; "
            f"sys.argv = ['runlake', 'sql', 'select count(*) from runs', '--home', {str(home)!r}]\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print('loaded:', ','.join(m for m in ('pyarrow', 'deltalake', 'sqlglot', 'polars', "
            "'yaml', 'transforms.lake.core', 'transforms.warehouse.publishing') "
            "if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stdout
    assert "\n1 row\n" in done
    assert done.strip().endswith("loaded:"), done


def test_importing_runlake_changes_no_library_and_reads_no_sql() -> None:
    """Importing the command line leaves typer and click as they were (runlake's help rules
    live in its own command classes: transforms.cli.help_text), and importing the report and
    compare reads no SQL file (the significance levels are read on first use)."""
    code = (
        "import typer.core as c, typer.rich_utils as r\n"
        "from transforms.warehouse import sqlfiles\n"
        "def read(*a, **k): raise AssertionError('a SQL constant read at import')\n"
        "sqlfiles.constant = read\n"
        "def now(): return [c.TyperOption.display_type_rich, c.TyperOption.__init__,\n"
        "    c.TyperArgument._usage_display_name, c.TyperCommand.format_help,\n"
        "    c.TyperGroup.format_help, c.TyperGroup.invoke, r.MAX_WIDTH]\n"
        "before = now()\n"
        "import transforms.cli, transforms.report, transforms.report.nightly_ci\n"
        "import transforms.compare.comparison_ci, transforms.compare.page\n"
        "assert now() == before, 'typer changed'\n")
    subprocess.run([sys.executable, "-c", code], check=True)
