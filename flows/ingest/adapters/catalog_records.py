"""Shared path for provider catalogs: provider records → quote-csv cells → the quote-csv rules.

A catalog adapter only reads its format and maps each priced option to a flat record with
quote-csv column names; every rule, the contract and duplicate detection are quote-csv's.
"""
import json
from decimal import Decimal

import polars as pl

from flows.ingest.adapters.base import FileContext, FileRejected, ParseResult
from flows.ingest.adapters.file_limits import check_json_nesting
from flows.ingest.adapters.quarantine import empty_quarantine
from flows.ingest import names
from flows.ingest.adapters.fields import catalog_memory_gb
from flows.ingest.adapters.json_text import read_text  # re-exported: the catalog adapters import it from here
from flows.ingest.adapters.quote_columns import OPTIONAL, REQUIRED
from flows.ingest.adapters.quote_csv import parse_raw_quotes

COLUMNS = sorted(REQUIRED | OPTIONAL)


def cell(value) -> str | None:
    """A JSON/CSV scalar as the text a quote-csv cell would hold (floats in positional notation)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return format(Decimal(repr(value)), "f")
    text = str(value).strip(" \t\r\n")
    return text or None


def number(value) -> float | None:
    """A JSON number (or numeric text) as a float; anything else (a list, 'N/A', true) is None."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        try:
            return float(value)
        except OverflowError:  # a 400-digit integer is no float
            return None
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


def joined(values):
    """A provider's list of names (regions, locations) as one comma-separated cell.

    A list of scalars is joined (numbers as written); anything else is returned as it is, so a
    nested value reaches `to_result`, which quarantines it as FIELD_TYPE_INVALID."""
    if values is None or values == []:
        return None
    if isinstance(values, list) and all(not isinstance(v, (list, dict)) for v in values):
        return ",".join(c for c in map(cell, values) if c is not None) or None
    return values


def read_json(ctx: FileContext):
    """The file parsed as JSON; malformed JSON rejects the file, naming line and column."""
    text = read_text(ctx)
    check_json_nesting(text, ctx.original_name)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise FileRejected("JSON_MALFORMED", f"line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except (ValueError, RecursionError) as exc:  # an integer over Python's 4,300-digit limit
        raise FileRejected("JSON_MALFORMED", f"a number has too many digits ({exc})") from None


def expect_list(doc, key: str | None, what: str) -> list:
    """The list of records at doc[key] (or doc itself when key is None), else SCHEMA_DRIFT."""
    items = doc.get(key) if key is not None and isinstance(doc, dict) else (doc if key is None else None)
    if not isinstance(items, list):
        where = f"a top-level '{key}' list" if key else "a top-level list"
        raise FileRejected("SCHEMA_DRIFT", f"expected {where} of {what}")
    return items


def catalog_model(name: str | None) -> str | None:
    """The catalog model for a provider's GPU name (flows/ingest/names.py rules), or None."""
    if name is None or isinstance(name, (list, dict)):
        return None
    return names.resolve_gpu(str(name)).gpu_model


def vram_scope_for(gpu_name: str | None, stated_gb: float | None, gpus_per_node: float | None) -> str:
    """Whether a stated memory figure reads as per GPU or per node, judged against the catalog.

    Some catalogs do not say (SkyPilot's SizeInMiB is per GPU for DigitalOcean, per node for Vast):
    the reading that matches the catalog wins; when neither does, per_gpu stands and VRAM_MISMATCH names it.
    """
    catalog = catalog_memory_gb().get(catalog_model(gpu_name) or "")
    stated_gb, gpus_per_node = number(stated_gb), number(gpus_per_node)  # provider values may be any JSON type
    if catalog and stated_gb and gpus_per_node and gpus_per_node > 1:
        if abs(stated_gb - catalog) > catalog * names.VRAM_MISMATCH_TOLERANCE and \
                abs(stated_gb / gpus_per_node - catalog) <= catalog * names.VRAM_MISMATCH_TOLERANCE:
            return "per_node"
    return "per_gpu"


def record(row_number: int, source: dict, **cells) -> dict:
    """One flat quote record: quote-csv cells plus the provider's own record kept for audit."""
    unknown = set(cells) - set(COLUMNS) - {"problem"}
    if unknown:
        raise ValueError(f"not quote-csv columns: {sorted(unknown)}")
    return {"row_number": row_number, "source": source, **cells}


def not_an_offer(row_number: int, source: dict, code: str, detail: str) -> dict:
    """A provider record that yields no GPU offer (CPU-only plan, nothing available): quarantined, not lost."""
    return {"row_number": row_number, "source": source, "problem": (code, detail)}


def each_record(items: list, build, what: str) -> list[dict]:
    """build(item, row) for each item of a provider's list, rows numbered from 1.

    An item that is not an object, or whose values have types the adapter cannot read, becomes one
    quarantined record naming its row: a provider's odd value is that row's problem, not the file's.
    """
    out = []
    for row, item in enumerate(items, start=1):
        if not isinstance(item, dict):
            out.append(not_an_offer(row, {"value": item}, "SCHEMA_DRIFT", f"row {row}: a {what} is not an object"))
            continue
        try:
            out += build(item, row)
        except (TypeError, ValueError, AttributeError, KeyError, IndexError, ArithmeticError) as exc:
            out.append(not_an_offer(row, item, "FIELD_TYPE_INVALID",
                                    f"row {row}: a value of this {what} has a type the adapter cannot read ({exc})"))
    return out


def _wrong_type(r: dict) -> tuple[str, str] | None:
    """FIELD_TYPE_INVALID for a record whose quote cell would hold a list or mapping (never stringified)."""
    for name in COLUMNS:
        value = r.get(name)
        if isinstance(value, (list, dict)):
            kind = "a list" if isinstance(value, list) else "a mapping"
            shown = json.dumps(value, default=str)[:80]
            return "FIELD_TYPE_INVALID", f"row {r['row_number']}: {name} is {kind} ({shown}), expected a single value"
    return None


def to_result(records: list[dict], ctx: FileContext) -> ParseResult:
    """Run the quote-csv rules on the mapped records; records that are not offers are quarantined as such."""
    for r in records:
        if "problem" not in r and (problem := _wrong_type(r)):
            r["problem"] = problem
    offers = [r for r in records if "problem" not in r]
    others = [r for r in records if "problem" in r]
    schema = {"row_number": pl.Int64, **{f"raw_{c}": pl.String for c in COLUMNS},
              "raw__source_record": pl.String}
    rows = [{"row_number": r["row_number"], **{f"raw_{c}": cell(r.get(c)) for c in COLUMNS},
             "raw__source_record": json.dumps(r["source"], default=str, ensure_ascii=False)} for r in offers]
    raw = pl.DataFrame(rows, schema=schema) if rows else pl.DataFrame(schema=schema)
    raw = raw.with_columns(pl.lit(None, pl.String).alias("row_shape_problem"))
    parsed = parse_raw_quotes(raw, ctx)
    skipped = pl.DataFrame(
        [{"row_number": r["row_number"], "reason_code": r["problem"][0],
          "detail": f"{r['problem'][0]}: {r['problem'][1]}",
          "raw_record": json.dumps(r["source"], default=str, ensure_ascii=False)} for r in others],
        schema=empty_quarantine().schema,
    )
    return ParseResult(accepted=parsed.accepted, quarantined=pl.concat([parsed.quarantined, skipped]),
                       rows_in=parsed.rows_in + len(others))
