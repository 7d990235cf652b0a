"""A span's fields as the span readers take them: the attribute spellings of each field (one
alias table), strings, counts and times, each checked for the type and range its column holds
(why not, in the caller's list of problems)."""

from datetime import UTC, datetime, timedelta
from typing import Any

from transforms.normalize.columns import INT64_MAX
from transforms.read import jsontext
from transforms.read.dates import in_utc
from transforms.read.readers import describe

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
RUN_ID_KEYS = ("run_id", "pipelines.run_id")
AGENT_KEYS = ("agent.name", "gen_ai.agent.name")
# One alias table: each field and the attribute spellings seen in the wild, first match wins
# (current OTel GenAI, then older GenAI, OpenInference `llm.*`, OpenLLMetry, Vercel AI SDK).
ALIASES: dict[str, tuple[str, ...]] = {
    "provider": ("gen_ai.provider.name", "gen_ai.system", "llm.provider", "llm.system",
                 "ai.model.provider"),
    "model": ("gen_ai.response.model", "gen_ai.request.model", "llm.model_name",
              "ai.response.model", "ai.model.id"),
    "input_tokens": ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens",
                     "llm.token_count.prompt", "llm.usage.prompt_tokens",
                     "ai.usage.promptTokens", "ai.usage.inputTokens"),
    "output_tokens": ("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens",
                      "llm.token_count.completion", "llm.usage.completion_tokens",
                      "ai.usage.completionTokens", "ai.usage.outputTokens"),
    "max_tokens": ("gen_ai.request.max_tokens", "llm.request.max_tokens"),
    "finish_reasons": ("gen_ai.response.finish_reasons", "ai.response.finishReason"),
    "input_messages": ("gen_ai.input.messages", "gen_ai.prompt", "ai.prompt.messages"),
    "output_messages": ("gen_ai.output.messages", "gen_ai.completion"),
    "cached_input_tokens": ("gen_ai.usage.cache_read.input_tokens",
                            "gen_ai.usage.cache_read_input_tokens",
                            "gen_ai.usage.cached_input_tokens",
                            "llm.token_count.prompt_details.cache_read",
                            "ai.usage.cachedInputTokens"),
    "reasoning_tokens": ("gen_ai.usage.reasoning.output_tokens",
                         "gen_ai.usage.reasoning_tokens",
                         "llm.token_count.completion_details.reasoning",
                         "ai.usage.reasoningTokens"),
}
CACHED_KEYS = ALIASES["cached_input_tokens"]
REASONING_KEYS = ALIASES["reasoning_tokens"]


def first_str(d: dict[str, Any], keys: tuple[str, ...]) -> str | None:
    """The first of `keys` whose value in `d` is a non-empty string."""
    for k in keys:
        v = d.get(k)
        if isinstance(v, str) and v:
            return v
    return None


def count(v: Any) -> int | None:
    """A count that fits its BIGINT column, else None (the caller flags a present value)."""
    return v if isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= INT64_MAX \
        else None


def attr_count(v: Any) -> int | None:
    """A count from a span attribute, where SDKs also write numbers as decimal strings or
    whole doubles (OTLP's doubleValue; the OTLP reader reads its integers with it too)."""
    if (isinstance(v, str) and v.isascii() and v.isdigit()) or (
            isinstance(v, float) and v.is_integer()):
        v = int(v)
    return count(v)


def strip_prefix(v: Any, prefix: str) -> str | None:
    """A string without `prefix` (an SDK's enum spelling, "SpanKind.CLIENT"); None for another
    value."""
    return v.removeprefix(prefix) if isinstance(v, str) else None


def first_key(d: dict[str, Any], keys: tuple[str, ...]) -> str | None:
    """The first of `keys` that `d` holds (with any value, null too)."""
    for k in keys:
        if k in d:
            return k
    return None


def shown(v: Any) -> str:
    """A value in a flag's detail: its JSON, cut, and why a whole number is no count."""
    text = jsontext.dumps(v)
    if isinstance(v, int) and not isinstance(v, bool) and v > INT64_MAX:
        return f"{text[:40]} (out of the 64-bit range)"
    return text[:30]


def ns_time(v: Any, key: str, bad: list[str]) -> datetime | None:
    """A time given in Unix nanoseconds, in UTC; why not in `bad`."""
    if isinstance(v, int) and not isinstance(v, bool):
        what = f"{key} {str(v)[:40]}"
        try:
            return in_utc(EPOCH + timedelta(microseconds=v // 1000), what, bad)
        except OverflowError:
            bad.append(f"{what} is out of range")
            return None
    if v is not None:
        bad.append(f"{key} is {describe(v)}, not Unix nanoseconds")
    else:
        bad.append(f"{key} is missing")
    return None


def iso_time(v: Any, key: str, bad: list[str]) -> datetime | None:
    """A log_request time (RFC 3339 text or Unix seconds), in UTC; why not in `bad`."""
    if v is None:
        return None
    what = f"log_request.{key} {str(v)[:40]!r}"
    if isinstance(v, str):
        try:
            ts = datetime.fromisoformat(v)
        except ValueError:
            pass
        else:
            return in_utc(ts if ts.tzinfo else ts.replace(tzinfo=UTC), what, bad)
    if isinstance(v, int | float) and not isinstance(v, bool):
        try:
            return in_utc(EPOCH + timedelta(seconds=v), what, bad)
        except OverflowError:
            bad.append(f"{what} is out of range")
            return None
    bad.append(f"{what} is not a date-time")
    return None
