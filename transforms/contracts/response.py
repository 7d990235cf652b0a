"""Agent response v1, the multi-turn turn response and the test platform's run envelope
(docs/formats.md)."""

from typing import Any, Literal

from pydantic import (
    AliasChoices,
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    NonNegativeFloat,
    NonNegativeInt,
)

UNFINISHED = frozenset({"error", "skipped"})
"""Outcome statuses of a run that crashed or did not run: it has no answer to give, so an
absent or empty final_response (or turn message) breaks no contract
(`final_response_absent_unfinished`, info)."""


# Records keep the fields they do not name (extra="allow"): shared by every input contract.
class OpenRecord(BaseModel):
    model_config = ConfigDict(extra="allow")


class FunctionRef(OpenRecord):
    name: str = Field(description="The tool's name.")
    arguments: Any = Field(None, description="Object preferred; JSON-encoded text accepted.")


class ToolCallFlat(OpenRecord):
    """The flat shape: {id?, name, arguments?}."""

    id: str | None = None
    name: str
    arguments: Any = Field(None, description="Object preferred; JSON-encoded text accepted.")


class ToolCallNested(OpenRecord):
    """The OpenAI Chat Completions shape: {id?, type: 'function', function: {name, arguments?}}."""

    id: str | None = None
    type: Literal["function"] = "function"
    function: FunctionRef


class Message(OpenRecord):
    """One role-tagged entry of the OpenAI-style transcript."""

    role: Literal["system", "user", "assistant", "tool"]
    content: str | list[Any] | None = Field(
        None, description="A string, an array of typed parts, or null (tool-call-only turns).")
    tool_call_id: str | None = Field(None, description="Set on role='tool' messages.")
    tool_calls: list[ToolCallFlat | ToolCallNested] | None = None
    thinking: list[dict[str, Any]] | None = Field(
        None, description="Reasoning blocks; the text key is read, else the block's JSON.")


class Metadata(OpenRecord):
    """Free-form runtime metadata; the five common keys become columns of `runs`."""

    model: str | None = None
    system_prompt_id: str | None = None
    total_input_tokens: NonNegativeInt | None = None
    total_output_tokens: NonNegativeInt | None = None
    agent_runtime_ms: NonNegativeFloat | None = None


class AgentResponse(OpenRecord):
    """Body returned by an agent for one run (agent response v1)."""

    final_response: str = Field(description="The terminal user-visible answer; over 50,000 "
                                "characters it is truncated with a warning. A run whose "
                                "outcome status is error or skipped may leave it out.")
    messages: list[Message] | None = None
    metadata: Metadata | None = None


class TurnResponse(OpenRecord):
    """Body returned for one turn of a multi-turn session."""

    message: str | None = Field(None, description="The assistant's reply to this turn "
                                "(primary field).")
    final_response: str | None = Field(None, description="Lenient alias of message.")
    messages: list[Message] | None = None
    metadata: Metadata | None = None
    session_done: bool | None = None


class ResponseContract(OpenRecord):
    response_mode: Literal["rich"] | None = None
    strictness: Literal["strict"] | None = None


class Outcome(OpenRecord):
    status: Literal["passed", "failed", "error", "skipped"] | None = None
    score: float | None = Field(None, ge=0, le=1)
    judge_skipped: bool | None = None
    error: str | None = None
    explanation: str | None = Field(None, description="Why the grader decided as it did "
                                    "(runs.outcome_explanation).")
    reason: str | None = Field(None, description="Alias of explanation; explanation wins "
                               "when both are given.")
    passed: bool | None = None
    scores: dict[str, "float | str | NamedScore"] | None = Field(
        None, description="Named scores of the run (the scores table): name -> a number, a "
        "label, or {value, label, explanation}. They never change the run's status.")


class NamedScore(OpenRecord):
    """One named score of outcome.scores."""

    value: float | None = None
    label: str | None = None
    explanation: str | None = None


class RunEnvelope(OpenRecord):
    """One line of response JSONL: the test platform's envelope around the agent's response."""

    run_id: str | None = Field(None, description="Required for dedup; derived from the line's "
                               "bytes when absent.")
    agent: str | None = Field(None, validation_alias=AliasChoices("agent", "agent_id",
                                                                  "agent_name"))
    agent_version: str | None = None
    test_case_id: str | None = Field(None, validation_alias=AliasChoices(
        "test_case_id", "case_id", "scenario_id"))
    batch_id: str | None = None
    trace_id: str | None = None
    session_id: str | None = None
    turn_index: int | None = None
    started_at: AwareDatetime | None = None
    ended_at: AwareDatetime | None = None
    model: str | None = None
    response_contract: ResponseContract | None = None
    outcome: Outcome | None = None
    passed: bool | None = None
    response: AgentResponse | TurnResponse | None = None


def explain(record: dict[str, Any]) -> list[str]:
    """Field-by-field reasons why a response JSONL record breaks its contracts ([] if none)."""
    from pydantic import ValidationError

    resp = record.get("response") if "response" in record else record
    env = {k: v for k, v in record.items() if k != "response"} if "response" in record else {
        k: v for k, v in record.items() if k in RunEnvelope.model_fields or k in (
            "agent_id", "agent_name", "case_id", "scenario_id")}
    turn = (isinstance(resp, dict) and "message" in resp) or record.get("session_id") is not None
    outcome = record.get("outcome")
    unfinished = isinstance(outcome, dict) and outcome.get("status") in UNFINISHED
    problems: list[str] = []
    checks: list[tuple[type[BaseModel], Any, str]] = [(RunEnvelope, env, "")]
    checks.append((TurnResponse if turn else AgentResponse, resp,
                   "response." if "response" in record else ""))
    for model, value, prefix in checks:
        try:
            model.model_validate(value)
        except ValidationError as e:
            problems += [f"{prefix}{'.'.join(map(str, x['loc']))}: {x['msg']}"
                         for x in e.errors()
                         if not (unfinished and model is AgentResponse
                                 and _absent_answer(x))]
    return problems


def _absent_answer(error: Any) -> bool:
    """A validation error that only says final_response is absent or null."""
    return tuple(error["loc"]) == ("final_response",) and (
        error["type"] == "missing" or error.get("input", "") is None)
