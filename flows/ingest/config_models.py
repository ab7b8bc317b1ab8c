"""The pydantic base for sources.yaml and workloads.yaml: typed fields, errors that name file, line and key.

A model validates the document `yaml_lines.load_yaml_with_lines` returns (mappings carry `.line`).
Its rules raise `fail(...)` with our own wording; `validate` turns every pydantic error into one
ConfigError line `line N: <key> <reason>`, N being the line of the entry (source, workload or
`settings:`) the key belongs to. `{key}` in a reason becomes the key's dotted path within that entry
(`fetch.timeout_s`), `{value}` the value as written (repr).
"""
import re
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, ClassVar, NoReturn, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, PrivateAttr, ValidationError, model_validator
from pydantic_core import PydanticCustomError

from provider_eval.errors import ConfigError

M = TypeVar("M", bound="ConfigModel")
_PLACEHOLDER = re.compile(r"\{(key|value)\}")


def fail(reason: str, line: int | None = None) -> NoReturn:
    """Reject a value: `reason` may hold {key} and {value}; `line` overrides the entry's line (0: none)."""
    raise PydanticCustomError("config", reason, None if line is None else {"line": line})


class ConfigModel(BaseModel):
    """A mapping of a config file: only its declared keys, each checked, remembering its line."""

    model_config = ConfigDict(extra="forbid", protected_namespaces=())
    # What an unknown key or a non-mapping is called in this mapping (subclasses word it their way).
    unknown_keys: ClassVar[str] = "unknown key(s) {unknown}; allowed: {allowed}"
    not_a_mapping: ClassVar[str] = "'{key}' must be a mapping"
    _line: int = PrivateAttr(0)

    @model_validator(mode="wrap")
    @classmethod
    def _known_keys(cls, data: Any, handler):
        if not isinstance(data, dict):
            fail(cls.not_a_mapping)
        unknown = set(data) - set(cls.model_fields)
        if unknown:
            names = sorted(unknown, key=str)
            fail(cls.unknown_keys.format(unknown=names, allowed=sorted(cls.model_fields),
                                         names=", ".join(map(repr, names))))
        model = handler(data)
        model._line = getattr(data, "line", 0)
        return model

    @property
    def line(self) -> int:
        """The 1-based line this mapping starts on in its file (0 when not read from a file)."""
        return self._line


def checked(base: Any, test: Callable[[Any], bool], reason: str, convert: Callable[[Any], Any] = lambda v: v,
            none: bool = True) -> Any:
    """`base` (optional when none=True) whose value must pass `test`, else the error `reason`."""
    def check(value):
        if value is None and none:
            return None
        if not test(value):
            fail(reason)
        return convert(value)
    return Annotated[base | None if none else base, BeforeValidator(check)]


def is_whole(value) -> bool:
    """A YAML integer (true/false are not numbers)."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value) -> bool:
    """A YAML integer or float (true/false are not numbers)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _locate(doc: Any, loc: tuple) -> tuple[int, tuple]:
    """The line of the entry `loc` points into (a top-level mapping or list item) and the key path within it."""
    node, line, start = doc, getattr(doc, "line", 0), 0
    for depth, part in enumerate(loc[:2], 1):
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            break
        if isinstance(node, dict):
            line, start = getattr(node, "line", line), depth
        elif depth == 2 and isinstance(part, int):  # a list item that is not a mapping: its own line
            line, start = getattr(doc, "item_lines", {}).get(loc[0], {part: line})[part], depth
    return line, loc[start:]


def _problem(error: dict, doc: Any) -> tuple[int, str]:
    line, path = _locate(doc, error["loc"])
    line = (error.get("ctx") or {}).get("line", line)
    key = ".".join(str(p) for p in path)
    if error["type"] == "config":
        values = {"key": key, "value": repr(error["input"])}
        return line, _PLACEHOLDER.sub(lambda m: values[m.group(1)], error["msg"])
    if error["type"] == "missing":
        return line, f"'{key}' is required"
    return line, f"{key}: {error['msg']}"  # a pydantic check no rule above words (kept as pydantic says it)


def _report(problems: list[tuple[int, str]]) -> str:
    """`line 2: a; b; line 7: c`: the problems of each line together, lines in file order."""
    by_line: dict[int, list[str]] = {}
    for line, reason in problems:
        if reason not in by_line.setdefault(line, []):
            by_line[line].append(reason)
    return "; ".join((f"line {line}: " if line else "") + "; ".join(reasons) for line, reasons in sorted(by_line.items()))


def validate(model: type[M], doc: Any, file: Path, context: dict | None = None) -> M:
    """`model` read from a loaded YAML document, or one ConfigError naming file, line, key and reason of each problem."""
    try:
        return model.model_validate(doc, context=context)
    except ValidationError as exc:
        raise ConfigError(f"{file}: " + _report([_problem(e, doc) for e in exc.errors(include_url=False)])) from None
