"""How runlake reads the YAML files its users write (the tool registry, model aliases and
prices): YAML's safe loader (libyaml's where PyYAML has it), with a key given twice in one
mapping refused. YAML itself keeps the last of the two silently, so a period whose `from` was
written twice would quietly take the second."""

from typing import Any

import yaml

_SAFE: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's safe loader where PyYAML was built with it (it reads the shipped price table
twelve times faster), else PyYAML's own."""


class Loader(_SAFE):  # type: ignore[misc]
    """The safe loader, refusing a key given twice in one mapping."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if not isinstance(key_node, yaml.ScalarNode) \
                    or key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"the key {key!r} is given twice in one mapping (line "
                    f"{key_node.start_mark.line + 1})", key_node.start_mark)
            seen.add(key)
        return dict(super().construct_mapping(node, deep=deep))


def load(raw: bytes | str) -> Any:
    """The document of `raw` (yaml.YAMLError when it is not valid YAML or repeats a key)."""
    return yaml.load(raw, Loader=Loader)  # noqa: S506 (a safe loader)
