"""Span and CreateSpansBulk (docs/formats.md): spans with an optional log_request
whose chat prompts are made of typed content blocks. Unknown block types are kept, not
rejected: providers add new ones faster than schemas follow."""

from typing import Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, NonNegativeInt

from transforms.contracts.response import OpenRecord

ErrorType = Literal["PROVIDER_TIMEOUT", "PROVIDER_QUOTA_LIMIT", "PROVIDER_RATE_LIMIT",
                    "PROVIDER_PARTIAL_RESPONSE", "PROVIDER_AUTH_ERROR", "PROVIDER_ERROR",
                    "TEMPLATE_RENDER_ERROR", "VARIABLE_MISSING_OR_EMPTY", "UNKNOWN_ERROR"]


class ContentBlock(OpenRecord):
    """A typed content block: text, thinking, code, image_url, media, output_media,
    server_tool_use, web_search_tool_result, code_execution_result, mcp_* calls, shell and
    apply-patch calls and outputs, ... (any other type is kept as it is)."""

    type: str
    text: str | None = None
    thinking: str | None = None


class FunctionCall(OpenRecord):
    name: str
    arguments: str


class ToolCall(OpenRecord):
    id: str
    type: Literal["function"] = "function"
    function: FunctionCall


class ChatMessage(OpenRecord):
    role: Literal["system", "user", "assistant", "function", "tool", "placeholder", "developer"]
    content: list[ContentBlock] | None = Field(
        None, description="An array of content blocks; a plain string breaks the contract.")
    name: str | None = None
    tool_call_id: str | None = None
    tool_calls: list[ToolCall] | None = None


class ChatPrompt(OpenRecord):
    type: Literal["chat"] = "chat"
    messages: list[ChatMessage]


class CompletionPrompt(OpenRecord):
    type: Literal["completion"] = "completion"
    content: list[ContentBlock]


class LogRequest(OpenRecord):
    """An LLM call logged with its span."""

    provider: str
    model: str
    input: ChatPrompt | CompletionPrompt
    output: ChatPrompt | CompletionPrompt
    request_start_time: AwareDatetime | None = Field(None, description="The span's start "
                                                     "when omitted.")
    request_end_time: AwareDatetime | None = Field(None, description="The span's end when "
                                                   "omitted.")
    parameters: dict[str, Any] = Field(default_factory=dict, description="temperature, "
                                       "max_tokens (or max_output_tokens), ...")
    input_tokens: NonNegativeInt | None = None
    output_tokens: NonNegativeInt | None = None
    price: float | None = Field(None, ge=0)
    status: Literal["SUCCESS", "WARNING", "ERROR"] = "SUCCESS"
    error_type: ErrorType | None = None
    error_message: str | None = Field(None, max_length=1024)
    prompt_name: str | None = None
    prompt_version_number: int | None = Field(None, gt=0)


class SpanContext(OpenRecord):
    trace_id: str
    span_id: str
    trace_state: str = ""


class SpanStatus(OpenRecord):
    status_code: Literal["StatusCode.ERROR", "StatusCode.OK", "StatusCode.UNSET"]
    description: str | None = None


class SpanResource(OpenRecord):
    attributes: dict[str, Any]
    schema_url: str = ""


class Span(OpenRecord):
    """One span: times are Unix nanoseconds."""

    name: str
    context: SpanContext
    kind: Literal["SpanKind.CLIENT", "SpanKind.CONSUMER", "SpanKind.INTERNAL",
                  "SpanKind.PRODUCER", "SpanKind.SERVER"]
    parent_id: str | None = None
    start_time: int
    end_time: int
    status: SpanStatus
    attributes: dict[str, Any]
    events: list[dict[str, Any]] = Field(default_factory=list)
    links: list[dict[str, Any]] = Field(default_factory=list)
    resource: SpanResource
    log_request: LogRequest | None = None


class CreateSpansBulk(BaseModel):
    model_config = ConfigDict(extra="allow")
    spans: list[Span]


def explain_span_line(record: dict[str, Any]) -> list[str]:
    """Field-by-field reasons why a span JSONL record breaks its contract ([] if none)."""
    from pydantic import ValidationError

    model: type[BaseModel] = CreateSpansBulk if "spans" in record else Span
    try:
        model.model_validate(record)
    except ValidationError as e:
        return [f"{'.'.join(map(str, x['loc']))}: {x['msg']}" for x in e.errors()]
    return []
