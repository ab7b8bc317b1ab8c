"""quote-csv: the project's canonical format for manual vendor quotes (docs/formats/quote-csv.md)."""
import polars as pl

from flows.ingest import names
from flows.ingest.adapters import fields as f
from flows.ingest.adapters.base import (FileContext, FileRejected, ParseResult, Rule, apply_rules,
                                        empty_quarantine, quarantine_rows)
from flows.ingest.adapters.csv_text import read_csv_rows
from models import plausibility, vocabulary

REQUIRED = {"offer_id", "gpu_model", "gpus_per_node", "price", "price_unit", "price_scope", "billing_model"}
OPTIONAL = {
    "provider", "currency", "billing_granularity", "min_term_hours", "region",
    "storage_per_gb_month", "egress_per_gb", "licence_per_hour", "setup_fee",
    "support_per_month", "valid_from", "valid_until", "observed_at", "notes",
    # The software image the vendor declares (used by the ROCm compatibility check).
    "rocm_version", "os", "kernel", "amdgpu_driver_version",
    # Stated memory (checked against the catalog), community/secure tier, commitment term.
    "vram_gb", "vram_scope", "tier", "commitment_term_hours",
    # A request for quotation (quote_status: requested) carries no price, only when it was asked.
    "quote_status", "requested_on",
    # The server around the GPUs as the quote states it (seed 000's procurement checklist).
    "cpu_model", "cpu_cores", "system_ram_gb", "nvme_gb", "interconnect", "network_gbps",
    "virtualisation", "software_tested",
}
# Each allowed value (models/vocabulary.py) as itself, plus the other spellings quotes use for it.
TIME_UNITS = {**{u: u for u in vocabulary.TIME_UNITS}, "sec": "second", "s": "second", "min": "minute",
              "hr": "hour", "h": "hour", "mo": "month"}
SCOPES = {**{s: s for s in vocabulary.PRICE_SCOPES}, "gpu": "per_gpu", "node": "per_node",
          "per_instance": "per_node", "instance": "per_node", "server": "per_node"}
BILLING_MODELS = {m: m for m in vocabulary.BILLING_MODELS}
TIERS = {t: t for t in vocabulary.TIERS}
# quoted: a price the vendor gave; requested: a quote asked for and not answered yet (no price).
QUOTE_STATUSES = {**{s: s for s in vocabulary.QUOTE_STATUSES}, "rfq": "requested", "pending": "requested"}
# How the GPUs reach the tenant: the whole server, whole GPUs passed through to a VM, or a share of
# a GPU (SR-IOV VF, compute partition, time-slicing), whose memory is not dedicated.
VIRTUALISATION = {**{k: k for k in vocabulary.VIRTUALISATIONS}, "bare-metal": "bare_metal"}
# The server facts a quote may state, in decimal units; stored in bytes (GB × 10^9) or as given (Gbps).
SPEC_NUMBERS = ["system_ram_gb", "nvme_gb", "network_gbps"]
MAX_SPEC_GB = 1e9
COST_LINES = ["storage_per_gb_month", "egress_per_gb", "licence_per_hour",
              "setup_fee", "support_per_month"]
# One offer × billing option: the same hardware may be quoted per tier and per commitment term.
OFFER_KEY = ["offer_id", "billing_model", "tier", "commitment_term_hours"]
HOURS_PER = {"second": 1 / 3600, "minute": 1 / 60, "hour": 1.0, "month": float(f.HOURS_PER_MONTH)}
# A price per GPU-hour outside this band (in the quote's own currency) is a unit mistake:
# '2000' labelled per hour, or '1.79' labelled per month. No rentable GPU is priced outside it.
PLAUSIBLE_PER_GPU_HOUR = plausibility.limit("price_per_gpu_hour")  # data/reference/plausibility_limits.csv
EARLIEST_QUOTE_DATE = "2015-01-01"  # before any GPU in the catalog shipped: a 1970/1900 placeholder
# Facts of the file a row came from, carried as columns: the rules and canonical columns of many files
# of one source then run as one polars query (most of a 5,000-row file's parse was per-query cost).
FILE_INDEX, FILE_NAME, FILE_SHA256, FILE_SEEN_AT = "_file_index", "_file_name", "_file_sha256", "_file_first_seen_at"


def _price_per_gpu_hour() -> pl.Expr:
    """The quote's price per GPU-hour in its own currency (for the plausibility band only)."""
    unit_hours = f.enum_value(f.raw("price_unit"), TIME_UNITS).replace_strict(HOURS_PER, default=None,
                                                                               return_dtype=pl.Float64)
    per_node = f.enum_value(f.raw("price_scope"), SCOPES) == "per_node"
    gpus = f.as_count(f.raw("gpus_per_node")).cast(pl.Float64)
    per_gpu = f.as_float(f.raw("price")) / unit_hours
    return pl.when(per_node).then(per_gpu / gpus).otherwise(per_gpu)


def _stated_vram_gb_per_gpu() -> pl.Expr:
    """Stated memory per GPU in GB: a per-node figure is divided by the GPU count."""
    stated = f.as_float(f.raw("vram_gb"))
    per_node = f.enum_value(f.raw("vram_scope").fill_null("per_gpu"), SCOPES) == "per_node"
    return pl.when(per_node).then(stated / f.as_count(f.raw("gpus_per_node"))).otherwise(stated)


def _catalog_vram_gb() -> pl.Expr:
    """The catalog's marketed memory per GPU for the quoted model."""
    return f.gpu_model(f.raw("gpu_model")).replace_strict(f.catalog_memory_gb(), default=None,
                                                            return_dtype=pl.Float64)


def _first_seen() -> pl.Expr:
    """When the row's file was first received (UTC)."""
    return f.as_utc_timestamp(pl.col(FILE_SEEN_AT))


def _observed(ctx: FileContext) -> tuple[pl.Expr, pl.Expr]:
    """observed_at and its basis: the row's own time, else the source's defaults.observed_at, else when
    the bytes arrived: fetched from a URL (an observation) or landed from a file (no date known)."""
    stated = f.as_utc_timestamp(f.raw("observed_at"))
    default = ctx.defaults.get("observed_at")  # ISO UTC text, checked by flows/ingest/sources.py
    default_at = f.as_utc_timestamp(pl.lit(default, pl.String))
    arrived = "fetched_at" if ctx.original_path.startswith(("http://", "https://")) else "landed_at"
    basis = (pl.when(stated.is_not_null()).then(pl.lit("row"))
             .when(pl.lit(default is not None)).then(pl.lit("source_default"))
             .otherwise(pl.lit(arrived)))
    return pl.coalesce(stated, default_at, _first_seen()), basis


def _time_rules() -> list[Rule]:
    """Timestamps need an offset; dates are ISO; none in the future or before the catalog's era."""
    seen = _first_seen()
    observed = f.as_utc_timestamp(f.raw("observed_at"))
    earliest = pl.lit(EARLIEST_QUOTE_DATE).str.to_date()
    rules = [
        Rule("TIMESTAMP_INVALID", f.raw("observed_at").is_not_null() & observed.is_null(),
             pl.format("observed_at '{}' is not ISO-8601 with a UTC offset (e.g. 2026-01-31T12:00:00Z)", f.raw("observed_at"))),
        Rule("DATE_IMPLAUSIBLE", observed > seen.dt.offset_by("1d"),
             pl.format("observed_at {} is after the file was received ({})", f.raw("observed_at"), pl.col(FILE_SEEN_AT))),
        Rule("DATE_IMPLAUSIBLE", observed.dt.date() < earliest,
             pl.format("observed_at {} is before {}", f.raw("observed_at"), pl.lit(EARLIEST_QUOTE_DATE))),
    ]
    for c in ("valid_from", "valid_until"):
        rules += [
            Rule("DATE_INVALID", f.raw(c).is_not_null() & f.as_date(f.raw(c)).is_null(),
                 pl.format("{} '{}' is not a YYYY-MM-DD date", pl.lit(c), f.raw(c))),
            Rule("DATE_IMPLAUSIBLE", f.as_date(f.raw(c)) < earliest,
                 pl.format("{} {} is before {}", pl.lit(c), f.raw(c), pl.lit(EARLIEST_QUOTE_DATE))),
        ]
    rules.append(Rule("DATE_INVALID", f.as_date(f.raw("valid_until")) < f.as_date(f.raw("valid_from")),
                      pl.format("valid_until {} is before valid_from {}", f.raw("valid_until"), f.raw("valid_from"))))
    return rules


def _is_requested() -> pl.Expr:
    """The row is a request for quotation: no price yet, so the price rules do not apply."""
    return f.enum_value(f.raw("quote_status").fill_null("quoted"), QUOTE_STATUSES) == "requested"


def _only_when_priced(rules: list[Rule]) -> list[Rule]:
    """Price rules hold for quoted rows; a requested row has no price, unit or scope to check."""
    return [Rule(r.reason_code, r.failed & ~_is_requested(), r.detail) for r in rules]


def _request_rules() -> list[Rule]:
    """A requested row states when it was asked and carries no price; a quoted row needs one."""
    requested = _is_requested()
    return [
        Rule("QUOTE_STATUS_UNKNOWN", f.raw("quote_status").is_not_null()
             & f.enum_value(f.raw("quote_status"), QUOTE_STATUSES).is_null(),
             pl.format("quote_status '{}' is not quoted or requested", f.raw("quote_status"))),
        Rule("QUOTE_STATUS_CONFLICT", requested & f.raw("price").is_not_null(),
             pl.format("quote_status is requested but a price ('{}') is given: a quote with a price is quoted",
                       f.raw("price"))),
        Rule("FIELD_MISSING", requested & f.raw("requested_on").is_null(),
             pl.lit("requested_on is empty (a requested quote says when it was asked for)")),
        Rule("DATE_INVALID", f.raw("requested_on").is_not_null() & f.as_date(f.raw("requested_on")).is_null(),
             pl.format("requested_on '{}' is not a YYYY-MM-DD date", f.raw("requested_on"))),
        Rule("DATE_IMPLAUSIBLE", f.as_date(f.raw("requested_on")) < pl.lit(EARLIEST_QUOTE_DATE).str.to_date(),
             pl.format("requested_on {} is before {}", f.raw("requested_on"), pl.lit(EARLIEST_QUOTE_DATE))),
    ]


def _spec_rules() -> list[Rule]:
    """Server facts, when stated, are numbers or known values; nothing is guessed from free text."""
    rules = [
        Rule("SPEC_INVALID", f.raw("cpu_cores").is_not_null() & f.as_count(f.raw("cpu_cores")).is_null(),
             pl.format("cpu_cores '{}' is not a positive whole number", f.raw("cpu_cores"))),
        Rule("SPEC_INVALID", f.raw("virtualisation").is_not_null()
             & f.enum_value(f.raw("virtualisation"), VIRTUALISATION).is_null(),
             pl.format("virtualisation '{}' is not bare_metal, passthrough or partitioned", f.raw("virtualisation"))),
    ]
    for name in SPEC_NUMBERS:
        rules += f.money_rules(name, f.raw(name), "SPEC", allow_zero=False)
    # Stored in bytes as a 64-bit integer: a billion GB (an exabyte) is already no server.
    rules += [Rule("SPEC_OUT_OF_RANGE", f.as_float(f.raw(c)).is_finite() & (f.as_float(f.raw(c)) >= MAX_SPEC_GB),
                   pl.format("{} {} GB is implausibly large", pl.lit(c), f.raw(c))) for c in ("system_ram_gb", "nvme_gb")]
    return rules


def _rules(ctx: FileContext) -> list[Rule]:
    defaults = ctx.defaults
    provider = f.with_default("provider", defaults)
    cur = f.with_default("currency", defaults)
    band = _price_per_gpu_hour()
    stated_vram, catalog_vram = _stated_vram_gb_per_gpu(), _catalog_vram_gb()
    rules = [
        Rule("ROW_RAGGED", pl.col("row_shape_problem").is_not_null(), pl.col("row_shape_problem")),
        Rule("HEADER_REPEATED", (f.raw("offer_id") == "offer_id") & (f.raw("gpu_model") == "gpu_model"),
             pl.lit("the header line appears again inside the file")),
        f.required_rule("offer_id", f.raw("offer_id")),
        f.required_rule("provider", provider),
        *f.gpu_rules(f.raw("gpu_model")),
        Rule("GPU_COUNT_INVALID", f.as_count(f.raw("gpus_per_node")).is_null(),
             pl.format("gpus_per_node '{}' is not a positive whole number", f.raw("gpus_per_node").fill_null("(empty)"))),
        *_request_rules(),
        *_only_when_priced([
            f.required_rule("price", f.raw("price")),
            *f.money_rules("price", f.raw("price"), "PRICE", allow_zero=False),
            Rule("CURRENCY_UNKNOWN", f.currency(cur).is_null(),
                 pl.format("currency '{}' has no FX rate in data/reference/fx_rates.csv", cur.fill_null("(empty)"))),
            Rule("UNIT_MISSING", f.raw("price_unit").is_null(), pl.lit("price_unit is empty (never assumed hourly)")),
        ]),
        # A requested quote may already name the currency, unit or scope it asks for: checked when given.
        Rule("CURRENCY_UNKNOWN", _is_requested() & cur.is_not_null() & f.currency(cur).is_null(),
             pl.format("currency '{}' has no FX rate in data/reference/fx_rates.csv", cur)),
        Rule("UNIT_UNKNOWN", f.raw("price_unit").is_not_null() & f.enum_value(f.raw("price_unit"), TIME_UNITS).is_null(),
             pl.format("price_unit '{}' is not second/minute/hour/month", f.raw("price_unit"))),
        *_only_when_priced([
            Rule("SCOPE_UNKNOWN", f.enum_value(f.raw("price_scope"), SCOPES).is_null(),
                 pl.format("price_scope '{}' is not per_gpu or per_node", f.raw("price_scope").fill_null("(empty)"))),
        ]),
        Rule("SCOPE_UNKNOWN", _is_requested() & f.raw("price_scope").is_not_null()
             & f.enum_value(f.raw("price_scope"), SCOPES).is_null(),
             pl.format("price_scope '{}' is not per_gpu or per_node", f.raw("price_scope"))),
        Rule("UNIT_IMPLAUSIBLE", (band < PLAUSIBLE_PER_GPU_HOUR[0]) | (band > PLAUSIBLE_PER_GPU_HOUR[1]),
             pl.format("price {} per {} ({}) is {} per GPU-hour, outside the plausible {}-{}: check price_unit and price_scope",
                       f.raw("price"), f.raw("price_unit"), f.raw("price_scope"), band.round(4),
                       pl.lit(PLAUSIBLE_PER_GPU_HOUR[0]), pl.lit(PLAUSIBLE_PER_GPU_HOUR[1]))),
        Rule("BILLING_MODEL_UNKNOWN", f.enum_value(f.raw("billing_model"), BILLING_MODELS).is_null(),
             pl.format("billing_model '{}' is not one of {}", f.raw("billing_model").fill_null("(empty)"),
                       pl.lit("/".join(BILLING_MODELS)))),
        Rule("TIER_UNKNOWN", f.raw("tier").is_not_null() & f.enum_value(f.raw("tier"), TIERS).is_null(),
             pl.format("tier '{}' is not community or secure", f.raw("tier"))),
        Rule("UNIT_UNKNOWN", f.raw("billing_granularity").is_not_null()
             & f.enum_value(f.raw("billing_granularity"), TIME_UNITS).is_null(),
             pl.format("billing_granularity '{}' is not second/minute/hour/month", f.raw("billing_granularity"))),
        *f.money_rules("min_term_hours", f.raw("min_term_hours"), "TERM", allow_zero=True),
        *f.money_rules("commitment_term_hours", f.raw("commitment_term_hours"), "TERM", allow_zero=False),
        *f.money_rules("vram_gb", f.raw("vram_gb"), "VRAM", allow_zero=False),
        Rule("SCOPE_UNKNOWN", f.raw("vram_scope").is_not_null() & f.enum_value(f.raw("vram_scope"), SCOPES).is_null(),
             pl.format("vram_scope '{}' is not per_gpu or per_node", f.raw("vram_scope"))),
        Rule("VRAM_MISMATCH", ((stated_vram - catalog_vram).abs() > catalog_vram * names.VRAM_MISMATCH_TOLERANCE),
             pl.format("vram_gb {} ({}) is {} GB per GPU, but the catalog's {} has {} GB",
                       f.raw("vram_gb"), f.raw("vram_scope").fill_null("per_gpu"), stated_vram.round(1),
                       f.gpu_model(f.raw("gpu_model")), catalog_vram)),
        *_spec_rules(),
        *_time_rules(),
        *f.default_conflict_rules(["provider", "currency", "region"], defaults),
    ]
    for line in COST_LINES:
        rules += f.money_rules(line, f.raw(line), "COST_LINE", allow_zero=True)
    return rules


def _canonical(frame: pl.DataFrame, ctx: FileContext) -> pl.DataFrame:
    d = ctx.defaults
    stated_vram = _stated_vram_gb_per_gpu()
    max_age = d.get("max_quote_age_days")
    observed_at, observed_at_basis = _observed(ctx)
    return frame.select(
        pl.lit(ctx.source_name).alias("source_name"),
        pl.col(FILE_NAME).alias("source_file"),
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
    return raw.with_columns(pl.lit(index, pl.Int32).alias(FILE_INDEX), pl.lit(ctx.original_name).alias(FILE_NAME),
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
    good_raw, bad = apply_rules(frame, _rules(ctx), keep=[FILE_INDEX])
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
