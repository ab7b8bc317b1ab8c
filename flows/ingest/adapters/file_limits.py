"""Reading a landed file within its source's limits: size, encoding, line length, JSON nesting."""
import re
from dataclasses import dataclass

from flows.ingest.adapters.base import FileContext, FileRejected


def read_utf8(path, original_name: str) -> str:
    """A file's text (a UTF-8 BOM dropped); an empty or non-UTF-8 file is rejected whole, with the reason."""
    data = path.read_bytes()
    if not data.strip():
        raise FileRejected("EMPTY", f"{original_name} is empty")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise FileRejected("ENCODING", f"not UTF-8: invalid byte at offset {exc.start}") from None


def physical_lines(text: str) -> list[str]:
    """The file's lines, split on '\\n' only (a CRLF's '\\r' dropped).

    Not str.splitlines(): that also splits on U+2028, U+2029, U+0085, \\v, \\f and \\x1c-\\x1e, which
    are valid inside a JSON string or a log value, and would cut one record into two.
    """
    return [line.removesuffix("\r") for line in text.split("\n")]


# Caps checked before a file is parsed (bad-input catalogue #41-43). sources.yaml may set
# max_file_bytes and max_line_chars per source or under `settings:`.
DEFAULT_MAX_FILE_BYTES = 1024 * 2**20  # 1 GiB: far above any real quote, catalog or result file
DEFAULT_MAX_LINE_CHARS = 65_536  # a quote line is < 1 KB; Python's csv refuses fields over 131,072
MAX_NESTING = 64  # quote, catalog and result documents nest < 10 deep; the parsers recurse per level
# Formats parsed whole into Python objects (JSON, YAML, catalog CSVs, MLPerf summaries) take ~16x
# their size in memory (measured: one 200 MB JSON line peaked at 3.3 GB), so they have a lower
# default cap than max_file_bytes; a source that sets max_file_bytes sets this cap too.
DEFAULT_MAX_DOCUMENT_BYTES = 32 * 2**20  # real result, catalog and quote documents are < 5 MB
# One record of a line format (a JSON line, a log line) is parsed whole: the same reasoning, per line.
# A source's max_line_chars sets it (counted in bytes here: a character is at least one byte).
DEFAULT_MAX_RECORD_BYTES = 32 * 2**20
LINE_HEAD_CHARS = 200  # what an over-long line keeps for its quarantine row
JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def check_file_size(ctx: FileContext) -> None:
    """Reject a file over the source's size cap before a byte of it is read."""
    cap = ctx.defaults.get("max_file_bytes") or DEFAULT_MAX_FILE_BYTES
    size = ctx.path.stat().st_size
    if size > cap:
        raise FileRejected("TOO_LARGE", f"{ctx.original_name} is {size:,} bytes; the source's max_file_bytes is "
                                        f"{cap:,} (sources.yaml)")


def check_document_size(ctx: FileContext, what: str) -> None:
    """Reject a file parsed whole (JSON, YAML, …) over the document cap, before a byte is read (memory)."""
    check_file_size(ctx)
    cap = ctx.defaults.get("max_file_bytes") or DEFAULT_MAX_DOCUMENT_BYTES
    size = ctx.path.stat().st_size
    if size > cap:
        raise FileRejected("TOO_LARGE", f"{ctx.original_name} is {size:,} bytes; a {what} is parsed whole, so it may "
                                        f"be at most {cap:,} bytes (sources.yaml max_file_bytes raises the cap)")


@dataclass(frozen=True)
class LongLine:
    """A line over the record cap: never held in memory, only its number, length and head."""

    number: int
    length_bytes: int
    head: str
    cap: int

    def detail(self) -> str:
        return (f"line {self.number} is {self.length_bytes:,} bytes, over the {self.cap:,}-byte line cap "
                f"(max_line_chars): not parsed; its first {LINE_HEAD_CHARS} characters are in raw_record")


def read_capped_lines(ctx: FileContext, chunk_bytes: int = 2**20) -> list:
    """The file's lines as physical_lines would give them, read in chunks: a line over the record cap
    is a LongLine (its bytes are skipped, never joined), so one huge line cannot exhaust memory.

    Empty and non-UTF-8 files are rejected as read_utf8 rejects them; a UTF-8 BOM is dropped."""
    check_file_size(ctx)
    cap = ctx.defaults.get("max_line_chars") or DEFAULT_MAX_RECORD_BYTES
    lines: list = []
    parts: list[bytes] = []  # the current line's bytes (only its head once it is over the cap)
    kept = length = line_start = offset = 0
    blank = True

    def finish() -> None:
        number, data = len(lines) + 1, b"".join(parts)
        if length > cap:
            head = data[:LINE_HEAD_CHARS * 4].decode("utf-8", "replace")[:LINE_HEAD_CHARS]
            lines.append(LongLine(number, length, head, cap))
            return
        start = line_start
        if number == 1 and data.startswith(b"\xef\xbb\xbf"):
            data, start = data[3:], start + 3
        try:
            lines.append(data.decode("utf-8").removesuffix("\r"))
        except UnicodeDecodeError as exc:
            raise FileRejected("ENCODING", f"not UTF-8: invalid byte at offset {start + exc.start}") from None

    with open(ctx.path, "rb") as fh:
        while chunk := fh.read(chunk_bytes):
            blank = blank and not chunk.strip()
            pieces = chunk.split(b"\n")
            for i, piece in enumerate(pieces):
                length += len(piece)
                if length <= cap or kept < LINE_HEAD_CHARS * 4:
                    parts.append(piece)
                    kept += len(piece)
                if length > cap and kept > LINE_HEAD_CHARS * 4:  # over the cap: keep the head only
                    parts = [b"".join(parts)[:LINE_HEAD_CHARS * 4]]
                    kept = len(parts[0])
                if i < len(pieces) - 1:  # a newline ends the line
                    finish()
                    offset += len(piece) + 1
                    line_start, parts, kept, length = offset, [], 0, 0
                else:
                    offset += len(piece)
    finish()
    if blank:
        raise FileRejected("EMPTY", f"{ctx.original_name} is empty")
    return lines


def max_line_chars(ctx: FileContext) -> int:
    """The longest line this source's files may have."""
    return ctx.defaults.get("max_line_chars") or DEFAULT_MAX_LINE_CHARS


def check_json_nesting(text: str, original_name: str) -> None:
    """Reject JSON nested deeper than MAX_NESTING before parsing (the parser recurses per level)."""
    if text.count("[") + text.count("{") <= MAX_NESTING:  # too few brackets to nest that deep: no scan
        return
    depth = deepest = 0
    for char in re.findall(r"[\[\]{}]", JSON_STRING.sub("", text)):
        depth += 1 if char in "[{" else -1
        if depth > deepest:
            deepest = depth
            if deepest > MAX_NESTING:
                raise FileRejected("NESTING_TOO_DEEP", f"{original_name} nests more than {MAX_NESTING} levels deep")
