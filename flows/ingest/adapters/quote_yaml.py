"""quote-yaml: one vendor quote (hardware, provider, validity) with several billing options (docs/formats/quote-yaml.md).

Each billing option becomes one quote-csv row, so both formats share every rule and the contract.
"""
import datetime as dt
import json
from decimal import Decimal

import polars as pl
import yaml

from flows.ingest.adapters.base import FileContext, FileRejected, ParseResult
from flows.ingest.adapters.file_limits import MAX_NESTING, check_document_size, max_line_chars, read_utf8
from flows.ingest.adapters.quarantine import QUARANTINE_COLUMNS
from flows.ingest.adapters.quote_columns import OPTIONAL, REQUIRED
from flows.ingest.adapters.quote_csv import parse_raw_quotes
from flows.ingest.yaml_lines import AmbiguousScalar, load_yaml_with_lines
from provider_eval.errors import ConfigError

COLUMNS = REQUIRED | OPTIONAL
# Keys that describe one way of paying; the rest describe the hardware and the quote as a whole.
# Cost lines, validity and notes may sit at either level: an option's value wins for that option.
OPTION_ONLY = {"billing_model", "price", "price_unit", "price_scope", "billing_granularity",
               "min_term_hours", "commitment_term_hours", "tier"}
SHARED = {"storage_per_gb_month", "egress_per_gb", "licence_per_hour", "setup_fee",
          "support_per_month", "valid_from", "valid_until", "notes", "currency",
          # A quote may be requested as a whole, or one option asked for beside priced ones.
          "quote_status", "requested_on"}
QUOTE_KEYS = (COLUMNS - OPTION_ONLY) | {"billing"}
OPTION_KEYS = OPTION_ONLY | SHARED


def _cell(value, where: str) -> str | None:
    """A YAML scalar as the text a CSV cell would hold (an ambiguous scalar as written: its row is quarantined)."""
    if value is None:
        return None
    if isinstance(value, AmbiguousScalar):
        return str.__str__(value)
    if isinstance(value, (dict, list)):
        kind = "mapping" if isinstance(value, dict) else "list"
        raise FileRejected("SCHEMA_DRIFT", f"{where}: expected a single value, got a {kind}")
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (dt.datetime, dt.date)):
        return value.isoformat()
    if isinstance(value, float):
        # Positional notation, as a CSV cell would hold it: 2e-05 → 0.00002 (NaN/Infinity stay named).
        return format(Decimal(repr(value)), "f")
    text = str(value).strip(" \t\r\n")
    return text or None


def _check_keys(mapping: dict, allowed: set[str], what: str) -> None:
    line = getattr(mapping, "line", 0)
    if not isinstance(mapping, dict):
        raise FileRejected("SCHEMA_DRIFT", f"line {line}: each {what} must be a mapping")
    unknown = set(mapping) - allowed
    if unknown:
        raise FileRejected("SCHEMA_DRIFT", f"line {line}: unknown key(s) {sorted(map(str, unknown))} in a {what}; "
                                           f"allowed: {sorted(allowed)}")


def _rows(doc) -> list[dict]:
    """One flat record per billing option; `row_number` is the line where the option starts."""
    if not isinstance(doc, dict) or set(doc) != {"quotes"} or not isinstance(doc["quotes"], list):
        raise FileRejected("SCHEMA_DRIFT", "expected a single top-level 'quotes:' list")
    rows = []
    for quote in doc["quotes"]:
        _check_keys(quote, QUOTE_KEYS | OPTION_ONLY, "quote")
        options = quote.get("billing")
        if options is None:
            # A quote with no `billing:` list is itself its one billing option.
            options = [quote]
        elif not isinstance(options, list) or not options:
            raise FileRejected("SCHEMA_DRIFT", f"line {quote.line}: 'billing' must be a non-empty list")
        else:
            stray = set(quote) & OPTION_ONLY
            if stray:
                raise FileRejected("SCHEMA_DRIFT", f"line {quote.line}: {sorted(stray)} belong in each "
                                                   "'billing' option, not in the quote")
        for option in options:
            if option is not quote:
                _check_keys(option, OPTION_KEYS, "billing option")
            merged = {k: v for k, v in quote.items() if k != "billing"} | dict(option)
            line = getattr(option, "line", 0)
            record = {f"raw_{c}": _cell(merged.get(c), f"line {line}: {c}") for c in sorted(COLUMNS)}
            ambiguous = [v for v in merged.values() if isinstance(v, AmbiguousScalar)]
            rows.append({"row_number": line, **record,
                         "_ambiguous": "; ".join(f"line {v.line}: {v.key} {v.reason}" for v in ambiguous) or None})
    return rows


def _ambiguous_rows(rows: list[dict], ctx: FileContext) -> tuple[list[dict], pl.DataFrame]:
    """Rows holding a scalar YAML 1.1 and 1.2 read differently are quarantined whole (never guessed)."""
    bad = [r for r in rows if r["_ambiguous"]]
    quarantined = pl.DataFrame(
        [{"row_number": r["row_number"], "reason_code": "AMBIGUOUS_YAML_SCALAR",
          "detail": f"AMBIGUOUS_YAML_SCALAR: {ctx.original_name}: {r['_ambiguous']}",
          "raw_record": json.dumps({k.removeprefix("raw_"): v for k, v in r.items() if k.startswith("raw_")})}
         for r in bad], schema=QUARANTINE_COLUMNS)
    return [{k: v for k, v in r.items() if k != "_ambiguous"} for r in rows if not r["_ambiguous"]], quarantined


_OPENS = (yaml.BlockMappingStartToken, yaml.BlockSequenceStartToken, yaml.FlowMappingStartToken,
          yaml.FlowSequenceStartToken)
_CLOSES = (yaml.BlockEndToken, yaml.FlowMappingEndToken, yaml.FlowSequenceEndToken)


def _check_shape_before_parsing(text: str, ctx: FileContext) -> None:
    """Caps a YAML parser needs before it builds anything (#41, #42): line length, depth, aliases.

    The scanner is iterative, the composer recursive: 10,000 nested brackets would exhaust it,
    and an alias repeated inside aliases ("billion laughs") expands a few lines into millions of rows.
    """
    cap = max_line_chars(ctx)
    for number, line in enumerate(text.split("\n"), start=1):
        if len(line) > cap:
            raise FileRejected("LINE_TOO_LONG", f"line {number} is {len(line):,} characters, over max_line_chars {cap:,}")
    depth = 0
    try:
        for token in yaml.scan(text, Loader=yaml.SafeLoader):
            if isinstance(token, (yaml.AliasToken, yaml.AnchorToken)):
                raise FileRejected("YAML_ALIAS", f"line {token.start_mark.line + 1}: anchors and aliases (&name, "
                                                 "*name) are not allowed in quotes: write each value out")
            depth += isinstance(token, _OPENS) - isinstance(token, _CLOSES)
            if depth > MAX_NESTING:
                raise FileRejected("NESTING_TOO_DEEP", f"line {token.start_mark.line + 1}: nested more than "
                                                       f"{MAX_NESTING} levels deep")
    except yaml.YAMLError:
        return  # a syntax error: the parser below names it (YAML_MALFORMED)


def parse(ctx: FileContext) -> ParseResult:
    """Read one quote-yaml file into canonical quote observations plus quarantined rows."""
    check_document_size(ctx, "YAML document")
    _check_shape_before_parsing(read_utf8(ctx.path, ctx.original_name), ctx)
    try:
        doc = load_yaml_with_lines(ctx.path, ambiguous="mark")
    except ConfigError as exc:
        # The loader names the landed path; the user knows the file by its original name.
        raise FileRejected("YAML_MALFORMED", str(exc).replace(str(ctx.path), ctx.original_name)) from None
    rows, ambiguous = _ambiguous_rows(_rows(doc), ctx)
    schema = {"row_number": pl.Int64, **{f"raw_{c}": pl.String for c in sorted(COLUMNS)}}
    raw = pl.DataFrame(rows, schema=schema) if rows else pl.DataFrame(schema=schema)
    raw = raw.with_columns(pl.lit(None, pl.String).alias("row_shape_problem"))
    parsed = parse_raw_quotes(raw, ctx)
    if ambiguous.height:
        parsed.quarantined = pl.concat([parsed.quarantined, ambiguous], how="diagonal_relaxed")
        parsed.rows_in += ambiguous.height
    return parsed
