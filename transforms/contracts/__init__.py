"""Pydantic models of runlake's input contracts, one module per input format.

They document the formats (`runlake schema`) and explain a bad record field by field
(`runlake validate`); the bulk ingest path does not build them.
"""

from pydantic import BaseModel

from transforms.contracts.response import AgentResponse, RunEnvelope, TurnResponse
from transforms.contracts.spans import CreateSpansBulk, Span

SCHEMAS: dict[str, type[BaseModel]] = {
    "response": AgentResponse,
    "turn": TurnResponse,
    "envelope": RunEnvelope,
    "span": Span,
    "spans-bulk": CreateSpansBulk,
}
"""Format name -> the model whose JSON Schema `runlake schema FORMAT` prints."""

__all__ = ["SCHEMAS", "AgentResponse", "CreateSpansBulk", "RunEnvelope", "Span",
           "TurnResponse"]
