"""A sender of GenAI spans through the real OpenTelemetry SDK and its OTLP/HTTP exporter, run
as its own process by the receiver's tests and benchmark:

    python -m tests.otel_sender URL SENDER RUNS [BATCH] [--json]

Each run is one trace: an invoke_agent span (gen_ai.agent.name `agent-SENDER`) over a chat span
(model gpt-4.1, input tokens 100 + run, output tokens 10) and an execute_tool span. The resource's
service.name is `service-SENDER`, so an agent name inherited wrongly shows. A BatchSpanProcessor of
BATCH spans exports each trace's children before their parent, in different requests. Prints
`exported N` once the provider has flushed (the exporter retries what the receiver refuses)."""

import sys


def main(argv: list[str]) -> None:
    from opentelemetry.exporter.otlp.proto.http import Compression
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    url, sender, runs = argv[0], int(argv[1]), int(argv[2])
    batch = int(argv[3]) if len(argv) > 3 and argv[3].isdigit() else 2
    provider = TracerProvider(resource=Resource.create({"service.name": f"service-{sender}"}))
    exporter = OTLPSpanExporter(endpoint=url, compression=Compression.Gzip, timeout=30)
    provider.add_span_processor(BatchSpanProcessor(exporter, max_export_batch_size=batch,
                                                   schedule_delay_millis=20,
                                                   max_queue_size=max(2048, runs * 3)))
    tracer = provider.get_tracer("runlake.tests")
    for run in range(runs):
        with tracer.start_as_current_span(f"invoke_agent agent-{sender}", attributes={
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": f"agent-{sender}"}):
            with tracer.start_as_current_span("chat gpt-4.1", attributes={
                    "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
                    "gen_ai.request.model": "gpt-4.1",
                    "gen_ai.usage.input_tokens": 100 + run,
                    "gen_ai.usage.output_tokens": 10}):
                pass
            with tracer.start_as_current_span("execute_tool lookup", attributes={
                    "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup"}):
                pass
    ok = provider.force_flush(timeout_millis=120_000)
    provider.shutdown()
    print(f"exported {runs * 3}" if ok else "flush timed out", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
