"""A response line for the adversarial tests to change one field of."""

from typing import Any


def response_line(run_id: str, **fields: Any) -> dict[str, Any]:
    """A minimal valid response line (agent a, 2026-11-20), with `fields` set over it."""
    line: dict[str, Any] = {"run_id": run_id, "agent": "a", "started_at": "2026-11-20T10:00:00Z",
                            "response": {"final_response": "ok", "messages": [
                                {"role": "user", "content": "hi"},
                                {"role": "assistant", "content": "ok"}]}}
    line.update(fields)
    return line
