"""Load YAML (1.2 core schema) while remembering the line each mapping starts on, for error messages.

PyYAML resolves plain scalars by YAML 1.1 rules, which change values silently: `0123` → 83,
`010` → 8, `NO` → false, `2:29` → 149, `2026-02-30` → a crash. Inputs here are read with the YAML
1.2 core schema instead (null, true/false, decimal/0o/0x integers, floats; everything else is text,
dates included), and a plain scalar that YAML 1.1 would read as a different value is *ambiguous*:
the user may have meant either, so it is never guessed (docs/inputs.md).
"""
import re
from pathlib import Path
from typing import Any

import yaml

from provider_eval.errors import ConfigError

INT, FLOAT, BOOL, NULL, STR, TIMESTAMP = (f"tag:yaml.org,2002:{t}" for t in
                                          ("int", "float", "bool", "null", "str", "timestamp"))


class Core12Loader(yaml.SafeLoader):
    """PyYAML's safe loader with the YAML 1.2 core schema's implicit types (and nothing else)."""


Core12Loader.yaml_implicit_resolvers = {}
for _tag, _pattern, _first in (
    (NULL, r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
    (BOOL, r"^(?:true|True|TRUE|false|False|FALSE)$", list("tTfF")),
    (INT, r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", list("-+0123456789")),
    (FLOAT, r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
     list("-+0123456789.")),
):
    Core12Loader.add_implicit_resolver(_tag, re.compile(_pattern), _first)


def _core_int(loader: Core12Loader, node: yaml.ScalarNode) -> int:
    text = node.value
    if text.startswith(("0o", "0x")):
        return int(text[2:], 8 if text[1] == "o" else 16)
    return int(text)  # a leading zero is decimal in 1.2 (but ambiguous: see _ambiguity)


def _core_float(loader: Core12Loader, node: yaml.ScalarNode) -> float:
    text = node.value.lower()
    if text.endswith(".inf"):
        return float("-inf") if text.startswith("-") else float("inf")
    return float("nan") if text == ".nan" else float(text)


Core12Loader.add_constructor(INT, _core_int)
Core12Loader.add_constructor(FLOAT, _core_float)
Core12Loader.add_constructor(BOOL, lambda loader, node: node.value.lower() == "true")

_YAML11 = yaml.resolver.Resolver()  # how PyYAML (and most YAML 1.1 tools) would read the same scalar


class AmbiguousScalar(str):
    """A plain scalar YAML 1.1 and 1.2 read as different values; the text as written, with the why."""

    line: int = 0
    key: str = ""
    reason: str = ""


class LineDict(dict):
    """A dict that knows the 1-based line its YAML mapping started on (and each item of its list values)."""

    line: int = 0
    item_lines: dict  # key -> the line of each item of that key's list value


def _ambiguity(node: yaml.ScalarNode, value: Any) -> str | None:
    """Why a plain scalar reads differently under YAML 1.1 than under the 1.2 core schema, else None."""
    if node.style is not None:  # quoted: the user said it is text
        return None
    old = _YAML11.resolve(yaml.ScalarNode, node.value, (True, False))
    if old == TIMESTAMP or (old == node.tag and old != INT):
        return None  # a date stays as its text (the contract parses it); the rest read alike
    try:
        old_value = yaml.safe_load(node.value) if old in (INT, FLOAT, BOOL, NULL) else node.value
    except (yaml.YAMLError, ValueError):
        old_value = node.value
    if old == node.tag and old_value == value:
        return None
    shown = "text" if isinstance(value, str) else repr(value)
    return (f"'{node.value}' reads as {old_value!r} in YAML 1.1 but as {shown} in YAML 1.2: "
            f"quote it ('{node.value}') if it is text, or write the number or true/false you mean")


def _construct(node: yaml.Node, loader: Core12Loader, strict: bool, key: str = "") -> Any:
    if isinstance(node, yaml.MappingNode):
        out = LineDict()
        out.line, out.item_lines = node.start_mark.line + 1, {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                kind = "mapping" if isinstance(key_node, yaml.MappingNode) else "list"
                raise ConfigError(f"line {key_node.start_mark.line + 1}: a key must be a plain value, not a {kind}")
            name = loader.construct_object(key_node, deep=True)
            if name in out:
                raise ConfigError(f"line {key_node.start_mark.line + 1}: duplicate key {name!r}")
            out[name] = _construct(value_node, loader, strict, str(name))
            if isinstance(value_node, yaml.SequenceNode):
                out.item_lines[name] = [child.start_mark.line + 1 for child in value_node.value]
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_construct(child, loader, strict, key) for child in node.value]
    value = loader.construct_object(node, deep=True)
    reason = _ambiguity(node, value) if isinstance(node, yaml.ScalarNode) else None
    if reason is None:
        return value
    line = node.start_mark.line + 1
    if strict:
        raise ConfigError(f"line {line}: {key}: {reason}")
    marked = AmbiguousScalar(node.value)
    marked.line, marked.key, marked.reason = line, key, reason
    return marked


def load_yaml_with_lines(path: Path, ambiguous: str = "error") -> Any:
    """Parse a YAML file into dicts/lists; mappings carry `.line`; errors name file and line.

    ambiguous="error": a scalar YAML 1.1 would read differently is a ConfigError naming line and key
    (configuration files); "mark": it is returned as an AmbiguousScalar for the caller to quarantine.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: file not found") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not valid UTF-8 ({exc.reason} at byte {exc.start})") from None
    loader = None
    try:
        loader = Core12Loader(text)  # its reader refuses control characters at once (a YAMLError)
        node = loader.get_single_node()
        if node is None:
            raise ConfigError("file is empty")  # the file is named below, as for every error here
        return _construct(node, loader, strict=ambiguous == "error")
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark else "unknown line"
        raise ConfigError(f"{path}: {where}: invalid YAML ({getattr(exc, 'problem', exc)})") from None
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    except (ValueError, TypeError, RecursionError) as exc:  # e.g. an integer over 4,300 digits, an odd !!tag
        raise ConfigError(f"{path}: invalid YAML value ({str(exc)[:200]})") from None
    finally:
        if loader is not None:
            loader.dispose()
