"""Read a JSON document (or one JSON line) strictly: whole-file problems get a reason code."""
import json

from flows.ingest.adapters.base import (FileContext, FileRejected, check_file_size, check_json_nesting, physical_lines,
                                        read_utf8)


class DuplicateKey(ValueError):
    """A JSON object names the same key twice (which value is meant is unknowable)."""


def _no_duplicates(pairs: list) -> dict:
    seen = {}
    for key, value in pairs:
        if key in seen:
            raise DuplicateKey(f"key {key!r} appears twice in one object")
        seen[key] = value
    return seen


class NumberTooLong(ValueError):
    """A JSON number with more digits than Python converts (4,300): no measurement is that long."""


def loads(text: str):
    """json.loads that refuses duplicate keys (NaN / Infinity literals parse: the rules name them)."""
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates)
    except (json.JSONDecodeError, DuplicateKey):
        raise
    except ValueError as exc:  # int() refuses integers over sys.get_int_max_str_digits()
        raise NumberTooLong(f"a number has too many digits ({exc})") from None
    except RecursionError:
        raise NumberTooLong("nested too deeply to parse") from None


def _ends_early(exc: json.JSONDecodeError, text: str) -> bool:
    """The parser ran off the end of the text (cut mid-object, mid-array or mid-string)."""
    return exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string")


def read_text(ctx: FileContext) -> str:
    """The file's text; empty, non-UTF-8 or over-size files are rejected whole (base.read_utf8)."""
    check_file_size(ctx)
    return read_utf8(ctx.path, ctx.original_name)


def read_document(ctx: FileContext):
    """Parse the whole file as one JSON value; a cut-off document is TRUNCATED, not malformed."""
    text = read_text(ctx)
    check_json_nesting(text, ctx.original_name)
    try:
        return loads(text)
    except DuplicateKey as exc:
        raise FileRejected("SCHEMA_DRIFT", str(exc)) from None
    except NumberTooLong as exc:
        raise FileRejected("JSON_MALFORMED", str(exc)) from None
    except json.JSONDecodeError as exc:
        # The parser ran off the end of the text: the file was cut short (a killed writer, a
        # partial download), so none of it is trusted.
        if _ends_early(exc, text):
            raise FileRejected("TRUNCATED", f"JSON ends early (line {exc.lineno}): {exc.msg}") from None
        raise FileRejected("JSON_MALFORMED", f"line {exc.lineno} column {exc.colno}: {exc.msg}") from None


def read_lines(text: str, is_result, what: str):
    """JSON Lines: (line number, object) for each good line, and (line, code, detail, text) for each bad one.

    One bad line never hides the lines after it; only the last line can be TRUNCATED (a killed
    writer), any other unreadable line is JSON_MALFORMED."""
    good, bad = [], []
    lines = physical_lines(text)
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            doc = loads(line)
        except DuplicateKey as exc:
            bad.append((number, "SCHEMA_DRIFT", f"line {number}: {exc}", line))
            continue
        except NumberTooLong as exc:
            bad.append((number, "JSON_MALFORMED", f"line {number}: {exc}", line))
            continue
        except json.JSONDecodeError as exc:
            cut = number == len(lines) and not text.endswith("\n") and _ends_early(exc, line)
            bad.append((number, "TRUNCATED" if cut else "JSON_MALFORMED",
                        f"line {number} column {exc.colno}: {exc.msg}", line))
            continue
        if not is_result(doc):
            bad.append((number, "SCHEMA_DRIFT", f"line {number} is not {what}", line))
            continue
        good.append((number, doc))
    return good, bad
