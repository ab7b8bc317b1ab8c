"""Load YAML while remembering the line each mapping starts on, for error messages."""
from pathlib import Path
from typing import Any

import yaml

from provider_eval.errors import ConfigError


class LineDict(dict):
    """A dict that knows the 1-based line its YAML mapping started on."""

    line: int = 0


def _construct(node: yaml.Node, loader: yaml.SafeLoader) -> Any:
    if isinstance(node, yaml.MappingNode):
        out = LineDict()
        out.line = node.start_mark.line + 1
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True)
            if key in out:
                raise ConfigError(f"line {key_node.start_mark.line + 1}: duplicate key {key!r}")
            out[key] = _construct(value_node, loader)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_construct(child, loader) for child in node.value]
    return loader.construct_object(node, deep=True)


def load_yaml_with_lines(path: Path) -> Any:
    """Parse a YAML file into dicts/lists; mappings carry `.line`; errors name file and line."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: file not found") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not valid UTF-8 ({exc.reason} at byte {exc.start})") from None
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            raise ConfigError(f"{path}: file is empty")
        return _construct(node, loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark else "unknown line"
        raise ConfigError(f"{path}: {where}: invalid YAML ({getattr(exc, 'problem', exc)})") from None
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    finally:
        loader.dispose()
