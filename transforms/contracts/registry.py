"""The tool registry: OpenAI function-tool definitions per agent, and the checks they impose on
tool calls (docs/formats.md).

A registry file (`tools.json` or `tools.yaml`) is an object whose keys are agent names and whose
values are lists of `{"type": "function", "function": {"name", "description", "parameters",
"strict"}}`; the key `"*"` applies to every agent. Calls of agents the registry does not name
are not checked. For a named agent:

- `tool_unknown`: the tool is not registered for the agent (its own list plus `"*"`);
- `tool_arguments_schema_violation`: the arguments fail the tool's JSON schema (the detail
  names the JSON path of the first error);
- `tool_arguments_strict_violation`: a strict tool's arguments carry a property outside the
  schema or miss a declared one: strict conversion closes every object schema
  (additionalProperties: false) and makes its declared properties required.
"""

import copy
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from transforms.contracts import yamlfile
from transforms.errors import InputError

ANY_AGENT = "*"


@dataclass(frozen=True)
class Tool:
    agent: str
    name: str
    description: str | None
    parameters: dict[str, Any]
    strict: bool


def _strict_schema(schema: Any) -> Any:
    """The schema as strict mode reads it: every object closed, its properties required."""
    if isinstance(schema, list):
        return [_strict_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _strict_schema(v) for k, v in schema.items()}
    is_object = schema.get("type") == "object" or (
        isinstance(schema.get("type"), list) and "object" in schema["type"]) or \
        "properties" in schema
    if is_object:
        props = schema.get("properties") or {}
        out.setdefault("additionalProperties", False)
        out["required"] = sorted(set(schema.get("required") or []) | set(props))
    return out


def _json_path(error: jsonschema.ValidationError) -> str:
    path = "$"
    for part in error.absolute_path:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path


@dataclass
class Registry:
    """The registered tools of each agent, with their compiled validators (built lazily)."""

    tools: dict[str, dict[str, Tool]]
    source: str
    sha256: str
    _validators: dict[tuple[str, str], tuple[Any, Any]] = field(default_factory=dict,
                                                               repr=False, compare=False)

    def for_agent(self, agent: str) -> dict[str, Tool] | None:
        """The tools an agent may call, or None when the registry does not name the agent."""
        own = self.tools.get(agent)
        shared = self.tools.get(ANY_AGENT)
        if own is None and shared is None:
            return None
        return {**(shared or {}), **(own or {})}

    def check(self, tools: dict[str, Tool], name: str, arguments: Any,
              parsed: bool) -> list[tuple[str, str]]:
        """The findings on one call of `name` with `arguments` (parsed: the arguments are JSON
        that was read; when they were not JSON the invalid-JSON flag already says so)."""
        tool = tools.get(name)
        if tool is None:
            known = ", ".join(sorted(tools)[:8]) or "none"
            return [("tool_unknown", f"{name[:60]} is not registered for this agent "
                                     f"(registered: {known})")]
        if not parsed:
            return []
        key = (tool.agent, tool.name)
        if key not in self._validators:
            cls = jsonschema.validators.validator_for(tool.parameters,
                                                      default=jsonschema.Draft202012Validator)
            strict = cls(_strict_schema(tool.parameters)) if tool.strict else None
            self._validators[key] = (cls(tool.parameters), strict)
        plain, strict = self._validators[key]
        found: list[tuple[str, str]] = []
        errors = sorted(plain.iter_errors(arguments), key=lambda e: list(e.absolute_path))
        if errors:
            e = errors[0]
            found.append(("tool_arguments_schema_violation",
                          f"{name[:60]} arguments at {_json_path(e)}: {e.message[:200]}"))
        if strict is not None:
            seen = {(tuple(e.absolute_path), e.validator) for e in errors}
            extra = [e for e in strict.iter_errors(arguments)
                     if e.validator in ("additionalProperties", "required")
                     and (tuple(e.absolute_path), e.validator) not in seen]
            if extra:
                e = extra[0]
                found.append(("tool_arguments_strict_violation",
                              f"{name[:60]} is strict; arguments at {_json_path(e)}: "
                              f"{e.message[:200]}"))
        return found

    def rows(self) -> list[dict[str, Any]]:
        """One row per registered tool, for the lake's registry table."""
        return [{"agent": t.agent, "tool_name": t.name, "description": t.description,
                 "strict": t.strict, "parameters": json.dumps(t.parameters, sort_keys=True),
                 "registry_sha256": self.sha256, "registry_file": self.source}
                for agent in sorted(self.tools) for t in self.tools[agent].values()]


def load(path: Path) -> Registry:
    """Read and check a registry file; a clear InputError says what is wrong and where."""
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise InputError(f"{path}: cannot read the tool registry ({e.strerror})") from None
    try:
        doc = json.loads(raw) if path.suffix == ".json" else yamlfile.load(raw)
    except (ValueError, yaml.YAMLError) as e:
        raise InputError(f"{path}: not valid {'JSON' if path.suffix == '.json' else 'YAML'}: "
                         f"{str(e).splitlines()[0]}") from None
    if not isinstance(doc, dict):
        raise InputError(f"{path}: a tool registry is an object of agent name -> list of "
                         "function tools")
    tools: dict[str, dict[str, Tool]] = {}
    for agent, entries in doc.items():
        where = f"{path}: agent {str(agent)[:60]!r}"
        if not isinstance(agent, str) or not isinstance(entries, list):
            raise InputError(f"{where}: the value must be a list of function tools")
        own: dict[str, Tool] = {}
        for i, entry in enumerate(entries):
            fn = entry.get("function") if isinstance(entry, dict) else None
            if not isinstance(entry, dict) or entry.get("type", "function") != "function" \
                    or not isinstance(fn, dict):
                raise InputError(f"{where}, tool {i}: expected {{\"type\": \"function\", "
                                 "\"function\": {\"name\", \"parameters\", ...}}")
            name = fn.get("name")
            if not isinstance(name, str) or not name:
                raise InputError(f"{where}, tool {i}: function.name is missing")
            params = fn.get("parameters", {"type": "object", "properties": {}})
            if not isinstance(params, dict):
                raise InputError(f"{where}, tool {name!r}: parameters must be a JSON schema "
                                 "object")
            try:
                jsonschema.validators.validator_for(
                    params, default=jsonschema.Draft202012Validator).check_schema(params)
            except jsonschema.SchemaError as e:
                raise InputError(f"{where}, tool {name!r}: parameters is not a valid JSON "
                                 f"schema: {e.message[:200]}") from None
            strict = fn.get("strict") is True
            if strict and _allows_extra(params):
                raise InputError(f"{where}, tool {name!r}: strict, but its schema sets "
                                 "additionalProperties: true, which strict mode rejects")
            if name in own:
                raise InputError(f"{where}: tool {name!r} is registered twice")
            own[name] = Tool(agent, name, fn.get("description") if isinstance(
                fn.get("description"), str) else None, copy.deepcopy(params), strict)
        tools[agent] = own
    return Registry(tools, str(path), hashlib.sha256(raw).hexdigest())


def _allows_extra(schema: Any) -> bool:
    if isinstance(schema, list):
        return any(_allows_extra(s) for s in schema)
    if not isinstance(schema, dict):
        return False
    return schema.get("additionalProperties") is True or any(
        _allows_extra(v) for k, v in schema.items() if k != "additionalProperties")
