"""`runlake serve`: receive OTLP/HTTP traces into the landing folder (docs/receiver.md)."""

from pathlib import Path
from typing import Annotated

import typer

from transforms.cli.app import app, fail, load_settings, out, printable

MIB = 1 << 20


@app.command("serve")
def serve_cmd(
    landing: Annotated[Path | None, typer.Option("--landing", help="Folder the received spans are "
                                          "written to, as DAY/….otlp.jsonl files; it is printed "
                                          "at start [default: $RUNLAKE_LANDING; one of the two "
                                          "is needed]",
                                          show_default=False)] = None,
    host: Annotated[str, typer.Option(help="Address to listen on; any other than the loopback "
                                      "needs RUNLAKE_RECEIVER_TOKEN.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port (0: any free one).")] = 4318,
) -> None:
    """Receive OpenTelemetry traces (OTLP/HTTP, POST /v1/traces, protobuf or JSON, gzip or
    not) and write them to the landing folder, where `runlake ingest` and the Dagster landing
    sensor read them. Stops on Ctrl-C or SIGTERM, closing its files."""
    from transforms.receiver.server import is_loopback, serve

    config = load_settings()
    if landing is not None:
        chosen = "--landing"
    else:
        if not isinstance(config.landing, Path):
            fail(f"RUNLAKE_LANDING {config.landing} is not a local folder: the receiver "
                  "writes local files (pass --landing DIR)", 2)
        if "landing" not in config.model_fields_set:
            # The settings' default landing folder is the samples' (./data_samples): live
            # traces written there would mix with them, so the folder is the user's to name.
            fail("say where to write what arrives: --landing DIR, or RUNLAKE_LANDING=DIR (the "
                  "folder the Dagster landing sensor watches; `runlake ingest DIR` reads it)",
                  2)
        landing = Path(config.landing)
        chosen = "RUNLAKE_LANDING"
    landing = landing.absolute()
    say = lambda text: out.print(printable(text), highlight=False, markup=False)  # noqa: E731
    say(f"landing folder: {landing} ({chosen}); the Dagster landing sensor reads it when "
        f"RUNLAKE_LANDING names it, and `runlake ingest {landing}` reads what arrived")
    token = config.receiver_token
    if token is None and not is_loopback(host):
        fail(f"--host {host} listens beyond this machine: set RUNLAKE_RECEIVER_TOKEN (at "
              "least 16 characters) and send it as Authorization: Bearer <token>", 2)
    serve(landing, host, port, token,
          max_body=int(config.receiver_max_body_mb * MIB),
          queue_bytes=int(config.receiver_queue_mb * MIB),
          connections=config.receiver_connections,
          file_bytes=int(config.receiver_file_mb * MIB),
          file_seconds=config.receiver_file_seconds,
          memory_bytes=int(config.receiver_memory_mb * MIB),
          say=say)
