"""`runlake import`, `schema` and `validate`: the input formats, and other tools' results."""

import json
from pathlib import Path
from typing import Annotated

import typer

from transforms.cli.app import (
    KIND_HELP,
    KindChoice,
    app,
    fail,
    out,
    printable,
)
from transforms.cli.ingest import print_skipped
from transforms.errors import InputError
from transforms.importers import FORMATS

_FORMATS = [*FORMATS]

@app.command("import", epilog="Formats:\n" + "\n".join(
    f"{name}: {describe}" for name, describe in FORMATS.items()))
def import_cmd(
    fmt: Annotated[str, typer.Argument(
        help=f"{', '.join(_FORMATS[:-1])} or {_FORMATS[-1]}")],
    sources: Annotated[list[Path], typer.Argument(
        help="Result files to convert (for inspect also .eval logs, and folders of logs).")],
    out_dir: Annotated[Path, typer.Option("--out", help="Landing folder to write "
                                          "<name>.responses|spans|otlp.jsonl files into.")],
    agent: Annotated[str | None, typer.Option(help="Agent name, when the source has "
                                              "none.")] = None,
    model: Annotated[str | None, typer.Option(help="Model name, when the source has "
                                              "none.")] = None,
) -> None:
    """Convert other tools' result files into response (or span) JSONL for `runlake ingest`."""
    from transforms.importers.known import run_import

    try:
        results = run_import(fmt, sources, out_dir, agent, model)
    except InputError as e:
        fail(str(e), 2)
    for r in results:
        unit = "span" if r.output.name.endswith((".spans.jsonl", ".otlp.jsonl")) else "run"
        what = f"{r.runs:,} {unit}{'' if r.runs == 1 else 's'}"
        if unit == "run":
            what += f" ({r.passed:,} of {r.graded:,} graded passed)" if r.graded else \
                " (ungraded)"
        out.print(printable(f"{r.source.name}: {what} -> {r.output}"), highlight=False,
                  markup=False)
        for note in r.notes:
            out.print(printable(f"  note: {note}"), highlight=False, markup=False)
    out.print(printable(f"wrote {len(results):,} file{'' if len(results) == 1 else 's'} to "
                         f"{out_dir}; next: runlake ingest {out_dir}"), highlight=False,
              markup=False)


@app.command("schema")
def schema_cmd(
    fmt: Annotated[str | None, typer.Argument(
        help="One of: response, turn, envelope, span, spans-bulk")] = None,
) -> None:
    """Print the JSON Schema of an input contract (all of them without an argument)."""
    from transforms.contracts import SCHEMAS

    if fmt is not None and fmt not in SCHEMAS:
        fail(f"unknown format {fmt!r}; known: {', '.join(SCHEMAS)}", 2)
    chosen = {fmt: SCHEMAS[fmt]} if fmt else SCHEMAS
    docs = {name: model.model_json_schema() for name, model in chosen.items()}
    out.print_json(json.dumps(docs[fmt] if fmt else docs))


@app.command("validate")
def validate_cmd(
    path: Annotated[Path, typer.Argument(
        help="A response, span, OTLP or durable state file (or a folder of them).")],
    max_errors: Annotated[int, typer.Option(help="Stop after this many bad lines.")] = 20,
    kind: Annotated[KindChoice | None, typer.Option(
        help="Read the file as this kind, whatever its name (" + KIND_HELP + ").")] = None,
) -> None:
    """Explain, field by field, which lines of an input file break the contracts."""
    from transforms.kinds import file_patterns
    from transforms.normalize import validate
    from transforms.read.discover import discover

    skipped: list[tuple[str, str]] = []
    files = discover([path], kind.value if kind is not None else None, skipped)
    print_skipped(skipped)
    if not files:
        fail(f"{path}: no input files", 2)
    unknown = [f.source_file for f in files if f.kind is None]
    if unknown:
        fail(f"{unknown[0]}: its kind cannot be told from its name ({file_patterns()}, or a "
             "folder named for the kind); pass --kind", 2)
    bad = 0
    for f in files:
        for found in validate.check(f):
            bad += 1
            if found.line is None:
                out.print(printable(f"{found.source_file}: {found.problems[0]}"),
                          style="bold", highlight=False, markup=False)
                continue
            out.print(f"{printable(found.source_file)}:{found.line}", style="bold",
                      highlight=False, markup=False)
            for p in found.problems:
                out.print(f"  {printable(p)}", highlight=False, markup=False)
            if bad >= max_errors:
                raise typer.Exit(1)
    out.print(f"{bad} line(s) break the contracts" if bad else "every line fits the contracts")
    raise typer.Exit(1 if bad else 0)


