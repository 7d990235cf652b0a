"""The webhook: the nightly verdict's JSON summary POSTed where RUNLAKE_WEBHOOK_URL says, and
the rule that makes trace text in it plain text for chat tools (Slack, Mattermost and the like
show its `text` field as is)."""

import json
import re
import unicodedata
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from transforms.errors import RunlakeError

WEBHOOK_TIMEOUT_S = 10.0


class NotifyError(RunlakeError):
    """The webhook could not be reached or refused the summary."""


_BREAKS = re.compile("[\t\n\v\f\r\x1c-\x1e\x85\u2028\u2029]")
_MENTION = re.compile(r"(?<!\w)@")
_HIDDEN = ("Cc", "Cf", "Cs", "Co", "Zl", "Zp")
"""Control characters (ESC, BEL...), format characters (bidi overrides and isolates, zero
widths, the byte-order mark), surrogates, private-use characters and line separators."""


def chat_safe(text: str) -> str:
    """Trace text as a chat tool shows it as plain text, never as markup: line breaks and tabs
    as spaces; control, bidi, zero-width and private characters removed; `&`, `<` and `>` as
    Slack's `&amp;`, `&lt;` and `&gt;` (so `<!channel>` and `<https://…|label>` are text, not a
    mention or a link); `](` as `] (` (no Markdown link `[label](url)` where Markdown is read);
    an `@` that starts a word as the fullwidth `＠` (no `@here` or `@channel` mention in
    Mattermost and other tools that read the bare word)."""
    text = _BREAKS.sub(" ", text)
    text = "".join(c for c in text if unicodedata.category(c) not in _HIDDEN)
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = text.replace("](", "] (")  # no Markdown link: `[label](url)` needs them together
    return _MENTION.sub("\uff20", text)


def chat_safe_values(value: Any) -> Any:
    """Every string in a JSON value through `chat_safe` (numbers, booleans, null kept)."""
    if isinstance(value, str):
        return chat_safe(value)
    if isinstance(value, dict):
        return {k: chat_safe_values(v) for k, v in value.items()}
    if isinstance(value, list):
        return [chat_safe_values(v) for v in value]
    return value


def notify(payload: dict[str, Any], url: str) -> None:
    """POST a verdict's JSON summary (Verdict.payload) to `url` (http or https). Raises
    NotifyError."""
    scheme = urllib.parse.urlsplit(url).scheme
    if scheme not in ("http", "https"):
        raise NotifyError(f"the webhook URL must start with http:// or https://, not {scheme!r}")
    body = json.dumps(payload).encode()
    req = urllib.request.Request(url, data=body, method="POST",
                                 headers={"Content-Type": "application/json",
                                          "User-Agent": "runlake"})
    try:
        with urllib.request.urlopen(req, timeout=WEBHOOK_TIMEOUT_S) as resp:  # noqa: S310
            resp.read(1024)
    except urllib.error.HTTPError as e:
        raise NotifyError(f"the webhook answered {e.code} {e.reason}") from e
    except (urllib.error.URLError, OSError, TimeoutError) as e:
        reason = getattr(e, "reason", e)
        raise NotifyError(f"the webhook could not be reached: {reason}") from e
