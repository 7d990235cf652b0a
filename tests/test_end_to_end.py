"""data_samples/ end to end: the committed landing folder gives the pinned warehouse, and its
counts agree with a count made independently from the raw files.

After a deliberate, reviewed change: `python -m tests.test_end_to_end` rewrites the golden file.
"""

import gzip
import json
from pathlib import Path

import pytest

from tests.conftest import REPO, SamplesLake
from transforms import warehouse
from transforms.ingest import IngestReport, ingest
from transforms.lake import Lake

GOLDEN = REPO / "tests" / "golden" / "data_samples.json"
SAMPLES = REPO / "data_samples"
TOOLS = SAMPLES / "tools.yaml"


def _raw_lines() -> dict[str, list[bytes]]:
    out = {}
    for p in sorted(SAMPLES.rglob("*.durable.json")):
        out[str(p.relative_to(SAMPLES))] = [p.read_bytes()]  # one document, one record
    for p in sorted(SAMPLES.rglob("*.jsonl*")):
        data = p.read_bytes()
        if p.suffix == ".gz":
            data = gzip.decompress(data)
        data = data.removeprefix(b"\xef\xbb\xbf")
        lines = data.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        out[str(p.relative_to(SAMPLES))] = [ln.removesuffix(b"\r") for ln in lines]
    return out


def _strict(line: bytes) -> object:
    def no_constants(c: str) -> None:
        raise ValueError(c)

    return json.loads(line.decode("utf-8"), parse_constant=no_constants)


def sample_summary(home: Path) -> dict[str, object]:
    """Ingest data_samples/ into `home` and describe the warehouse it gives."""
    return describe(home, ingest([SAMPLES], home, tools=TOOLS))


def describe(home: Path, report: IngestReport) -> dict[str, object]:
    """The warehouse of an ingest of data_samples/ (with its tools.yaml), and its report."""
    con = warehouse.connect(home)
    q = lambda sql: con.execute(sql).fetchall()  # noqa: E731
    result = {
        "files": len(report.files),
        "lines": q("SELECT sum(lines), sum(lines_accepted), sum(lines_quarantined), "
                   "sum(lines_blank) FROM ingest_files")[0],
        "runs_by_status": dict(q("SELECT status, count(*) FROM runs GROUP BY 1 ORDER BY 1")),
        "runs_by_agent_model": [list(r) for r in q(
            "SELECT agent, model, count(*) FROM runs GROUP BY ALL ORDER BY ALL")],
        "flags_by_code": dict(q("SELECT code, count(*) FROM flags GROUP BY 1 ORDER BY 1")),
        "quarantine_by_code": dict(q("SELECT error_code, count(*) FROM quarantine "
                                     "GROUP BY 1 ORDER BY 1")),
        "rows": {t: q(f"SELECT count(*) FROM {t}")[0][0] for t in (
            "runs", "messages", "tool_calls", "thinking", "metadata_kv", "spans", "llm_calls",
            "scores")},
        "response_rows": {t: q(f"SELECT count(*) FROM {t} WHERE source = 'response'")[0][0]
                          for t in ("messages", "tool_calls")},
        "llm_tokens": list(q("SELECT sum(input_tokens), sum(output_tokens) FROM llm_calls")[0]),
        "runs_by_tokens_source": dict(q("SELECT tokens_source, count(*) FROM runs "
                                        "GROUP BY 1 ORDER BY 1")),
        "days": [str(d) for (d,) in q("SELECT DISTINCT day FROM runs ORDER BY 1")],
        "runs_by_price_source": [list(r) for r in q(
            "SELECT coalesce(price_source, 'none'), count(*), round(sum(cost_usd), 6) FROM runs "
            "GROUP BY 1 ORDER BY 1")],
        "llm_calls_by_price_source": [list(r) for r in q(
            "SELECT coalesce(price_source, 'none'), count(*), round(sum(price), 6) "
            "FROM llm_calls GROUP BY 1 ORDER BY 1")],
        "unpriced_models": report.unpriced_models,
    }
    con.close()
    return json.loads(json.dumps(result))


@pytest.fixture(scope="module")
def summary(samples_lake: SamplesLake) -> dict[str, object]:
    """The session's shared samples lake (tests/conftest.py), described."""
    return describe(samples_lake.home, samples_lake.report)


def test_matches_golden(summary: dict[str, object]) -> None:
    """The sample warehouse is exactly the pinned one (regenerate the golden file only after
    reviewing a deliberate change)."""
    assert summary == json.loads(GOLDEN.read_text())


def test_counts_agree_with_an_independent_reading(summary: dict[str, object]) -> None:
    """Lines, runs, messages and tool calls match a count made with the stdlib json module."""
    raw = _raw_lines()
    lines = sum(len(v) for v in raw.values())
    blank = sum(1 for v in raw.values() for ln in v if not ln.strip())
    ids: set[str] = set()
    records: dict[str, dict] = {}
    spans: list[dict] = []
    traces: dict[str, set[str | None]] = {}  # trace id -> the run_id attributes of its spans
    evaluations = 0
    durable_msgs = durable_calls = 0
    for name, v in raw.items():
        if ".durable." in name:
            doc = _strict(v[0])
            ids.add(f"durable:{name}")
            for entry in doc["data"]["conversationHistory"]:
                for m in entry["messages"]:
                    types = [c["$type"] for c in m["contents"]]
                    results = types.count("functionResult")
                    durable_msgs += results if m["role"] == "tool" and results == len(types) \
                        else 1 + results
                    durable_calls += types.count("functionCall")
            continue
        if ".spans." in name:
            for ln in v:
                obj = _strict(ln)
                for span in obj.get("spans", [obj]):
                    spans.append(span)
                    traces.setdefault(span["context"]["trace_id"], set()).add(
                        span["attributes"].get("run_id"))
            continue
        if ".otlp." in name:  # the collector's records: GenAI attributes as KeyValue lists
            for ln in v:
                obj = _strict(ln)
                for rl in obj.get("resourceLogs", []):
                    for sl in rl["scopeLogs"]:
                        evaluations += sum(r.get("eventName") == "gen_ai.evaluation.result"
                                           for r in sl["logRecords"])
                for rs in obj.get("resourceSpans", []):
                    for ss in rs["scopeSpans"]:
                        for s in ss["spans"]:
                            a = {kv["key"]: kv["value"] for kv in s["attributes"]}
                            traces.setdefault(s["traceId"], set()).add(
                                a.get("run_id", {}).get("stringValue"))
                            evaluations += sum(e["name"] == "gen_ai.evaluation.result"
                                               for e in s.get("events", []))
                            is_chat = a.get("gen_ai.operation.name") == {"stringValue": "chat"}
                            spans.append({"log_request": {
                                "input_tokens": int(a["gen_ai.usage.input_tokens"]["intValue"]),
                                "output_tokens": int(
                                    a["gen_ai.usage.output_tokens"]["intValue"])}}
                                if is_chat else {})
            continue
        for ln in v:
            if not ln.strip():
                continue
            try:
                obj = _strict(ln)
            except ValueError:
                continue
            if isinstance(obj, dict) and ("response" in obj or "final_response" in obj):
                rid = obj.get("run_id") or f"derived:{name}:{ln!r}"
                ids.add(rid)
                records[rid] = obj
    assert summary["lines"][0] == lines
    assert summary["lines"][3] == blank
    # A trace no response line names (by trace_id, or by its spans' run_id) is a run of its
    # own: every sample trace holds an agent span or LLM calls.
    named = {r.get("trace_id") for r in records.values()}
    from_traces = [t for t, run_ids in traces.items() if t not in named and not run_ids & ids]
    assert summary["rows"]["runs"] == len(ids) + len(from_traces)
    assert summary["rows"]["scores"] == evaluations
    msgs = sum(len(r.get("response", r).get("messages") or []) for r in records.values())
    calls = sum(len(m.get("tool_calls") or []) for r in records.values()
                for m in (r.get("response", r).get("messages") or []))
    assert summary["response_rows"] == {"messages": msgs + durable_msgs,
                                        "tool_calls": calls + durable_calls}
    requests = [s["log_request"] for s in spans if s.get("log_request")]
    assert summary["rows"]["spans"] == len(spans)
    assert summary["rows"]["llm_calls"] == len(requests)
    assert summary["llm_tokens"] == [sum(r["input_tokens"] for r in requests),
                                     sum(r["output_tokens"] for r in requests)]
    assert summary["lines"][0] == sum(summary["lines"][1:])


if __name__ == "__main__":
    import tempfile

    GOLDEN.write_text(json.dumps(sample_summary(Path(tempfile.mkdtemp()) / "home"), indent=1)
                      + "\n")


def test_parallel_workers_give_the_same_lake(tmp_path: Path,
                                             summary: dict[str, object]) -> None:
    """Small blocks spread over two worker processes give exactly the serial result."""
    report = ingest([SAMPLES], tmp_path / "home", workers=2, block_bytes=16 * 1024,
                    tools=TOOLS)
    assert sum(f.lines for f in report.files) == summary["lines"][0]
    con = warehouse.connect(tmp_path / "home")
    runs = dict(con.execute("SELECT status, count(*) FROM runs GROUP BY 1").fetchall())
    lines = con.execute("SELECT sum(lines), sum(lines_accepted), sum(lines_quarantined), "
                        "sum(lines_blank) FROM ingest_files").fetchone()
    rows = {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in summary["rows"]}
    con.close()
    assert runs == summary["runs_by_status"]
    assert list(lines) == summary["lines"]
    assert rows == summary["rows"]


def test_accounting_check_view(tmp_path: Path) -> None:
    """checks.lines_accounted_for lists no file on the samples, and lists a file whose counts
    were tampered with."""
    import duckdb

    home = tmp_path / "home"
    ingest([SAMPLES], home)
    con = warehouse.connect(home)
    assert con.execute("SELECT count(*) FROM checks.lines_accounted_for").fetchone() == (0,)
    con.close()
    (part,) = Lake(home).file_uris("ingest_files")
    tampered = tmp_path / "tampered.parquet"
    duckdb.execute("COPY (SELECT * REPLACE (CASE WHEN day = DATE '2026-11-20' THEN lines + 1 "
                   f"ELSE lines END AS lines) FROM '{part}') TO '{tampered}'")
    Path(part).unlink()
    tampered.rename(part)
    con = warehouse.connect(home)
    rows = con.execute("SELECT lines - lines_accounted FROM checks.lines_accounted_for"
                       ).fetchall()
    con.close()
    assert rows == [(1,)] * len([p for p in (SAMPLES / "2026-11-20").iterdir()
                                 if ".jsonl" in p.name or p.name.endswith(".json")])
