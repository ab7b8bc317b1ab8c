"""quote-csv: the project's canonical format for manual vendor quotes (docs/formats/quote-csv.md).

Its columns and spellings live in quote_columns.py, its row rules in quote_rules.py; this module
turns raw rows into canonical quote observations and quarantine rows.
"""
import polars as pl

from flows.ingest.adapters import fields as f
from flows.ingest.adapters.base import (FILE_INDEX, FILE_SEEN_AT, FILE_SHA256, SOURCE_FILE, FileContext, FileRejected,
                                        ParseResult)
from flows.ingest.adapters.quarantine import empty_quarantine, quarantine_rows
from flows.ingest.adapters.row_rules import apply_rules
from flows.ingest.adapters.csv_text import read_csv_rows
from flows.ingest.adapters.quote_columns import (
    BILLING_MODELS, COST_LINES, OFFER_KEY, OPTIONAL,
    QUOTE_STATUSES, REQUIRED, SCOPES, TIERS, TIME_UNITS, VIRTUALISATION, observed, stated_vram_gb_per_gpu)
from flows.ingest.adapters.quote_rules import row_rules


def _canonical(frame: pl.DataFrame, ctx: FileContext) -> pl.DataFrame:
    d = ctx.defaults
    stated_vram = stated_vram_gb_per_gpu()
    max_age = d.get("max_quote_age_days")
    observed_at, observed_at_basis = observed(ctx)
    return frame.select(
        pl.lit(ctx.source_name).alias("source_name"),
        pl.col(SOURCE_FILE).alias("source_file"),
        pl.col(FILE_SHA256).alias("file_sha256"),
        pl.col("row_number"),
        f.with_default("provider", d).alias("provider"),
        f.raw("offer_id").alias("offer_id"),
        f.gpu_model(f.raw("gpu_model")).alias("gpu_model"),
        f.raw("gpu_model").alias("gpu_name_raw"),
        f.as_count(f.raw("gpus_per_node")).cast(pl.Int32).alias("gpus_per_node"),
        f.enum_value(f.raw("billing_model"), BILLING_MODELS).alias("billing_model"),
        f.as_money(f.raw("price")).alias("price_amount"),
        f.currency(f.with_default("currency", d)).alias("currency"),
        f.enum_value(f.raw("price_unit"), TIME_UNITS).alias("price_unit"),
        f.enum_value(f.raw("price_scope"), SCOPES).alias("price_scope"),
        f.enum_value(f.raw("billing_granularity").fill_null("hour"), TIME_UNITS).alias("billing_granularity"),
        f.as_money(f.raw("min_term_hours").fill_null("0")).alias("min_term_hours"),
        *[f.as_money(f.raw(c).fill_null("0")).alias(c) for c in COST_LINES],
        f.as_date(f.raw("valid_from")).alias("valid_from"),
        f.as_date(f.raw("valid_until")).alias("valid_until"),
        observed_at.alias("observed_at"),
        f.with_default("region", d).alias("region"),
        f.raw("notes").alias("notes"),
        *[f.raw(c).alias(c) for c in ("rocm_version", "os", "kernel", "amdgpu_driver_version")],
        f.enum_value(f.raw("tier"), TIERS).alias("tier"),
        f.as_money(f.raw("commitment_term_hours")).alias("commitment_term_hours"),
        # Marketed GB are decimal (10^9 bytes); stored per GPU, in bytes.
        (stated_vram * 1e9).round(0).cast(pl.Int64).alias("vram_bytes_stated"),
        # Without a stated time the file's arrival time stands in; recorded so history can tell.
        f.raw("observed_at").is_not_null().alias("observed_at_stated"),
        observed_at_basis.alias("observed_at_basis"),
        pl.lit(max_age, pl.Int32).alias("max_quote_age_days"),
        f.enum_value(f.raw("quote_status").fill_null("quoted"), QUOTE_STATUSES).alias("quote_status"),
        f.as_date(f.raw("requested_on")).alias("requested_on"),
        f.raw("cpu_model").alias("cpu_model"),
        f.as_count(f.raw("cpu_cores")).cast(pl.Int32).alias("cpu_cores"),
        # Decimal GB (10^9 bytes), as vendors write them; stored in bytes.
        *[(f.as_float(f.raw(c)) * 1e9).round(0).cast(pl.Int64).alias(c.replace("_gb", "_bytes"))
          for c in ("system_ram_gb", "nvme_gb")],
        f.raw("interconnect").alias("interconnect"),
        f.as_money(f.raw("network_gbps")).alias("network_gbps"),
        f.enum_value(f.raw("virtualisation"), VIRTUALISATION).alias("virtualisation"),
        f.raw("software_tested").alias("software_tested"),
        # Whether the quote states storage and egress (the seed's "total cost" needs both, even if 0).
        (f.raw("storage_per_gb_month").is_not_null() & f.raw("egress_per_gb").is_not_null())
        .alias("cost_lines_stated"),
        pl.col(FILE_INDEX),
    )


def _duplicates(frame: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The first row of an offer × billing option wins; later ones are named, not dropped."""
    key = [*OFFER_KEY, FILE_INDEX]  # duplicates within one file; across files is history
    marked = frame.with_columns(pl.col("row_number").min().over(key).alias("__first"),
                                (pl.len().over(key) > 1).alias("__repeated"))
    # Whether a later row repeats its first row exactly: hashed for repeated offers only (rare).
    same = pl.struct(pl.exclude("row_number", "source_file", FILE_INDEX, "__first", "__repeated")).hash()
    later = marked.filter("__repeated").with_columns(
        (same == same.first().over(key, order_by="row_number")).alias("__identical"),
    ).filter(pl.col("row_number") != pl.col("__first"))
    quarantined = later.select(
        pl.col("row_number"),
        pl.when("__identical").then(pl.lit("DUPLICATE_IN_FILE")).otherwise(pl.lit("CONFLICTING_DUPLICATE")).alias("reason_code"),
        pl.format("offer_id '{}' billing_model '{}' (tier {}, commitment {} h) already appears on row {}",
                  pl.col("offer_id"), pl.col("billing_model"), pl.col("tier").fill_null("-"),
                  pl.col("commitment_term_hours").cast(pl.String).fill_null("-"),
                  pl.col("__first")).alias("detail"),
        pl.struct(pl.exclude("__repeated", "__identical", "__first", FILE_INDEX)).struct.json_encode().alias("raw_record"),
        pl.col(FILE_INDEX),
    )
    return marked.filter(pl.col("row_number") == pl.col("__first")).drop("__first", "__repeated"), quarantined


def parse_raw_quotes(raw: pl.DataFrame, ctx: FileContext) -> ParseResult:
    """Rules, canonical columns and duplicate detection on one file's raw quote cells (shared by quote-yaml)."""
    return parse_raw_quote_files([raw], [ctx])[0]


def _with_file_columns(raw: pl.DataFrame, index: int, ctx: FileContext) -> pl.DataFrame:
    """raw plus the facts of its file (position in the batch, name, sha256, first seen) as columns."""
    return raw.with_columns(pl.lit(index, pl.Int32).alias(FILE_INDEX), pl.lit(ctx.original_name).alias(SOURCE_FILE),
                            pl.lit(ctx.file_sha256).alias(FILE_SHA256), pl.lit(ctx.first_seen_at).alias(FILE_SEEN_AT))


def parse_raw_quote_files(raws: list[pl.DataFrame], ctxs: list[FileContext]) -> list[ParseResult]:
    """parse_raw_quotes for files of one source (same defaults) whose raw frames have the same columns,
    checked as one frame; each file's result is what it would be alone."""
    ctx = ctxs[0]  # the source name and defaults the rules use: the same for every file here
    frame = pl.concat([_with_file_columns(raw, i, c) for i, (raw, c) in enumerate(zip(raws, ctxs))])
    quarantined = []
    if "row_too_long" in frame.columns:  # only the CSV reader meets over-long lines: they have no cells to check
        long_rows = frame.filter(pl.col("row_too_long").is_not_null())
        quarantined.append(quarantine_rows(
            long_rows.with_columns(pl.lit("LINE_TOO_LONG").alias("__code"),
                                   ("LINE_TOO_LONG: " + pl.col("row_too_long")).alias("__detail")),
            "__code", "__detail", [FILE_INDEX]))
        frame = frame.filter(pl.col("row_too_long").is_null()).drop("row_too_long")
    good_raw, bad = apply_rules(frame, row_rules(ctx), keep=[FILE_INDEX])
    canonical, dups = _duplicates(_canonical(good_raw, ctx))
    accepted = canonical.partition_by(FILE_INDEX, as_dict=True, include_key=False)
    rejected = pl.concat([*quarantined, bad, dups]).partition_by(FILE_INDEX, as_dict=True, include_key=False)
    no_rows = canonical.clear().drop(FILE_INDEX)
    # A flood of distinct bad values (a million unknown GPU names) keeps one small row each (#43).
    return [ParseResult(accepted=accepted.get((i,), no_rows), quarantined=rejected.get((i,), empty_quarantine()),
                        rows_in=raw.height)
            for i, raw in enumerate(raws)]


def parse(ctx: FileContext) -> ParseResult:
    """Read one quote-csv file into canonical quote observations plus quarantined rows."""
    return parse_raw_quotes(read_csv_rows(ctx, REQUIRED, OPTIONAL), ctx)


def parse_many(ctxs: list[FileContext]) -> list[ParseResult | FileRejected]:
    """parse for files of one source: each read on its own, then checked together per column layout."""
    out: list[ParseResult | FileRejected | None] = [None] * len(ctxs)
    raws: dict[int, pl.DataFrame] = {}
    for i, ctx in enumerate(ctxs):
        try:
            raws[i] = read_csv_rows(ctx, REQUIRED, OPTIONAL)
        except FileRejected as exc:
            out[i] = exc
    layouts: dict[tuple, list[int]] = {}
    for i, raw in raws.items():
        layouts.setdefault(tuple(raw.schema.items()), []).append(i)
    for members in layouts.values():
        for i, result in zip(members, parse_raw_quote_files([raws[i] for i in members], [ctxs[i] for i in members])):
            out[i] = result
    return out
