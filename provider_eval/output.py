"""Render query results as a rich table, JSON (a list of objects) or CSV, for people and scripts."""
import csv
import datetime as dt
import io
import json
import sys
from decimal import Decimal

from rich.console import Console
from rich.table import Table
from rich.text import Text

FORMATS = ("table", "json", "csv")
# rich lays out every cell (measure, wrap, pad): ~60 µs each, so a table of thousands of rows
# takes seconds to print and no one reads it. People get the first rows; scripts use json/csv.
TABLE_ROWS_SHOWN = 50
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _json_value(value):
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, (dt.datetime, dt.date)):
        return value.isoformat()
    if isinstance(value, list):
        return [_json_value(v) for v in value]
    return value


def _csv_cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        value = ";".join(str(v) for v in value)
    text = value.isoformat() if isinstance(value, (dt.datetime, dt.date)) else str(value)
    # Spreadsheet formula injection guard (OWASP): only text cells, never numbers like -2.49.
    if isinstance(value, str) and text.startswith(_FORMULA_START):
        text = "'" + text
    return text


def printable(text: str, keep_newlines: bool = False) -> str:
    """Text for a terminal: control, format and separator characters (ESC, bidi overrides, …) become spaces."""
    return "".join(c if c.isprintable() or (keep_newlines and c == "\n") else " " for c in text)


def _table_cell(value) -> str:
    # A cell may span lines (an EXPLAIN plan); nothing in it can drive the terminal.
    return printable(_cell_text(value), keep_newlines=True)


def _cell_text(value) -> str:
    if value is None:
        return ""
    if isinstance(value, Decimal):
        return f"{value:,.2f}" if value == 0 or abs(value) >= Decimal("0.01") else f"{value.normalize():f}"
    if isinstance(value, float):
        return f"{value:,.4g}"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    if isinstance(value, dt.datetime):
        return value.strftime("%Y-%m-%d %H:%M UTC")
    return str(value)


def stdout_console() -> Console:
    """A console for tables: the terminal's width ($COLUMNS where set), or wide enough to stay readable in a pipe or log."""
    return Console() if sys.stdout.isatty() else Console(width=200)


def render(columns: list[str], rows: list[tuple], fmt: str, title: str | None = None,
           headers: dict[str, str] | None = None, no_wrap: set[str] = frozenset()) -> None:
    """Print rows in the chosen format to stdout; `headers` relabels and `no_wrap` keeps columns whole (table only)."""
    if fmt == "json":
        print(json.dumps([{c: _json_value(v) for c, v in zip(columns, row)} for row in rows], indent=2))
    elif fmt == "csv":
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows([_csv_cell(v) for v in row] for row in rows)
        print(buf.getvalue(), end="")
    else:
        table = Table(title=title, show_lines=False, header_style="bold", title_justify="left")
        for c in columns:
            # An id meant to be copied (a config id) never wraps; the other columns fold to fit.
            table.add_column((headers or {}).get(c, c), overflow="fold", no_wrap=c in no_wrap,
                             min_width=len(max((_table_cell(r[columns.index(c)]) for r in rows), key=len, default=""))
                             if c in no_wrap else None)
        for row in rows:
            # Text, not str: data is never parsed as console markup ('[b]' in a name stays as written).
            table.add_row(*(Text(_table_cell(v)) for v in row))
        stdout_console().print(table)


def render_record(columns: list[str], row: tuple, title: str) -> None:
    """One row as a two-column field/value table (for explaining a single configuration)."""
    table = Table(title=title, show_header=False, title_justify="left")
    table.add_column("field", style="bold")
    table.add_column("value", overflow="fold")
    for c, v in zip(columns, row):
        table.add_row(c, Text(_table_cell(v)))
    stdout_console().print(table)
