"""`runlake serve`: an OTLP/HTTP receiver that lands received spans as OTLP/JSON lines.

- decode: a request body (protobuf or JSON, gzip or not) as the OTLP/JSON line to write, the
  spans rejected with the reason, and the OTLP answers (ExportTraceServiceResponse, Status);
- landing: the landing files, written under a hidden temporary name, fsync'd per request,
  renamed when closed, and recovered after a crash;
- server: the HTTP server (the standard library's), its write queue and its shutdown.
"""
