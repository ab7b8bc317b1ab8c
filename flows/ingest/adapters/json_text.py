"""Read a JSON document (or one JSON line) strictly: whole-file problems get a reason code."""
import json

from flows.ingest.adapters.base import FileContext, FileRejected
from flows.ingest.adapters.file_limits import (LongLine, check_document_size, check_json_nesting, read_capped_lines,
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


def read_text(ctx: FileContext, what: str = "JSON document") -> str:
    """The text of a file parsed whole; empty, non-UTF-8 or over-size files are rejected whole.

    Over the document cap (file_limits.check_document_size) is TOO_LARGE before a byte is read."""
    check_document_size(ctx, what)
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


def read_lines(ctx: FileContext, is_result, what: str):
    """JSON Lines: (line number, object) for each good line, and (line, code, detail, text) for each bad one.

    Lines are split on '\\n' only and read in chunks (file_limits.read_capped_lines): a line over the record
    cap is LINE_TOO_LONG without being parsed. One bad line never hides the lines after it; only the
    last line can be TRUNCATED (a killed writer), any other unreadable line is JSON_MALFORMED."""
    good, bad = [], []
    lines = read_capped_lines(ctx)
    for number, line in enumerate(lines, start=1):
        if isinstance(line, LongLine):
            bad.append((number, "LINE_TOO_LONG", line.detail(), line.head))
            continue
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
            # The file's last line (no newline after it) ran off its end: a killed writer.
            cut = number == len(lines) and _ends_early(exc, line)
            bad.append((number, "TRUNCATED" if cut else "JSON_MALFORMED",
                        f"line {number} column {exc.colno}: {exc.msg}", line))
            continue
        if not is_result(doc):
            bad.append((number, "SCHEMA_DRIFT", f"line {number} is not {what}", line))
            continue
        good.append((number, doc))
    return good, bad
