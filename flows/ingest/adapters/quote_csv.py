"""quote-csv: the project's canonical format for manual vendor quotes (docs/formats/quote-csv.md)."""
import polars as pl

from flows.ingest.adapters import fields as f
from flows.ingest.adapters.base import FileContext, ParseResult, Rule, apply_rules
from flows.ingest.adapters.csv_text import read_csv_text

REQUIRED = {"offer_id", "gpu_model", "gpus_per_node", "price", "price_unit", "price_scope", "billing_model"}
OPTIONAL = {
    "provider", "currency", "billing_granularity", "min_term_hours", "region",
    "storage_per_gb_month", "egress_per_gb", "licence_per_hour", "setup_fee",
    "support_per_month", "valid_from", "valid_until", "observed_at", "notes",
    # The software image the vendor declares (used by the ROCm compatibility check).
    "rocm_version", "os", "kernel", "amdgpu_driver_version",
}
TIME_UNITS = {
    "second": "second", "sec": "second", "s": "second",
    "minute": "minute", "min": "minute",
    "hour": "hour", "hr": "hour", "h": "hour",
    "month": "month", "mo": "month",
}
SCOPES = {"per_gpu": "per_gpu", "gpu": "per_gpu", "per_node": "per_node", "node": "per_node",
          "per_instance": "per_node", "instance": "per_node", "server": "per_node"}
BILLING_MODELS = {m: m for m in ("on_demand", "spot", "monthly", "dedicated", "reserved")}
COST_LINES = ["storage_per_gb_month", "egress_per_gb", "licence_per_hour",
              "setup_fee", "support_per_month"]


def _rules(defaults: dict) -> list[Rule]:
    provider = f.with_default("provider", defaults)
    cur = f.with_default("currency", defaults)
    rules = [
        f.required_rule("offer_id", f.raw("offer_id")),
        f.required_rule("provider", provider),
        *f.gpu_rules(f.raw("gpu_model")),
        Rule("GPU_COUNT_INVALID", f.as_count(f.raw("gpus_per_node")).is_null(),
             pl.format("gpus_per_node '{}' is not a positive whole number", f.raw("gpus_per_node"))),
        f.required_rule("price", f.raw("price")),
        *f.money_rules("price", f.raw("price"), "PRICE", allow_zero=False),
        Rule("CURRENCY_UNKNOWN", f.currency(cur).is_null(),
             pl.format("currency '{}' has no FX rate in data/reference/fx_rates.csv", cur.fill_null("(empty)"))),
        Rule("UNIT_MISSING", f.raw("price_unit").is_null(), pl.lit("price_unit is empty (never assumed hourly)")),
        Rule("UNIT_UNKNOWN", f.raw("price_unit").is_not_null() & f.enum_value(f.raw("price_unit"), TIME_UNITS).is_null(),
             pl.format("price_unit '{}' is not second/minute/hour/month", f.raw("price_unit"))),
        Rule("SCOPE_UNKNOWN", f.enum_value(f.raw("price_scope"), SCOPES).is_null(),
             pl.format("price_scope '{}' is not per_gpu or per_node", f.raw("price_scope").fill_null("(empty)"))),
        Rule("BILLING_MODEL_UNKNOWN", f.enum_value(f.raw("billing_model"), BILLING_MODELS).is_null(),
             pl.format("billing_model '{}' is not one of {}", f.raw("billing_model").fill_null("(empty)"),
                       pl.lit("/".join(BILLING_MODELS)))),
        Rule("UNIT_UNKNOWN", f.raw("billing_granularity").is_not_null()
             & f.enum_value(f.raw("billing_granularity"), TIME_UNITS).is_null(),
             pl.format("billing_granularity '{}' is not second/minute/hour/month", f.raw("billing_granularity"))),
        *f.money_rules("min_term_hours", f.raw("min_term_hours"), "TERM", allow_zero=True),
        Rule("TIMESTAMP_INVALID", f.raw("observed_at").is_not_null() & f.as_utc_timestamp(f.raw("observed_at")).is_null(),
             pl.format("observed_at '{}' is not ISO-8601 with a UTC offset (e.g. 2026-01-31T12:00:00Z)", f.raw("observed_at"))),
        *[Rule("DATE_INVALID", f.raw(c).is_not_null() & f.as_date(f.raw(c)).is_null(),
               pl.format("{} '{}' is not a YYYY-MM-DD date", pl.lit(c), f.raw(c))) for c in ("valid_from", "valid_until")],
        Rule("DATE_INVALID", f.as_date(f.raw("valid_until")) < f.as_date(f.raw("valid_from")),
             pl.format("valid_until {} is before valid_from {}", f.raw("valid_until"), f.raw("valid_from"))),
        *f.default_conflict_rules(["provider", "currency", "region"], defaults),
    ]
    for line in COST_LINES:
        rules += f.money_rules(line, f.raw(line), "COST_LINE", allow_zero=True)
    return rules


def _canonical(frame: pl.DataFrame, ctx: FileContext) -> pl.DataFrame:
    d = ctx.defaults
    return frame.select(
        pl.lit(ctx.source_name).alias("source_name"),
        pl.lit(ctx.original_name).alias("source_file"),
        pl.lit(ctx.file_sha256).alias("file_sha256"),
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
        pl.coalesce(f.as_utc_timestamp(f.raw("observed_at")),
                    pl.lit(ctx.first_seen_at).str.to_datetime(time_zone="UTC", time_unit="us")).alias("observed_at"),
        f.with_default("region", d).alias("region"),
        f.raw("notes").alias("notes"),
        *[f.raw(c).alias(c) for c in ("rocm_version", "os", "kernel", "amdgpu_driver_version")],
    )


def _duplicates(frame: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The first row of an (offer_id, billing_model) key wins; later ones are named, not dropped."""
    key = ["offer_id", "billing_model"]
    first = pl.col("row_number").min().over(key)
    same = pl.struct(pl.exclude("row_number", "source_file")).hash()
    dup = frame.with_columns(
        (pl.col("row_number") != first).alias("__dup"),
        (same == same.first().over(key, order_by="row_number")).alias("__identical"),
    )
    later = dup.filter("__dup")
    quarantined = later.select(
        pl.col("row_number"),
        pl.when("__identical").then(pl.lit("DUPLICATE_IN_FILE")).otherwise(pl.lit("CONFLICTING_DUPLICATE")).alias("reason_code"),
        pl.format("offer_id '{}' billing_model '{}' already appears on an earlier row", pl.col("offer_id"), pl.col("billing_model")).alias("detail"),
        pl.struct(pl.exclude("__dup", "__identical")).struct.json_encode().alias("raw_record"),
    )
    return dup.filter(~pl.col("__dup")).drop("__dup", "__identical"), quarantined


def parse(ctx: FileContext) -> ParseResult:
    """Read one quote-csv file into canonical quote observations plus quarantined rows."""
    raw = read_csv_text(ctx, REQUIRED, OPTIONAL)
    good_raw, bad = apply_rules(raw, _rules(ctx.defaults))
    canonical, dups = _duplicates(_canonical(good_raw, ctx))
    return ParseResult(accepted=canonical, quarantined=pl.concat([bad, dups]), rows_in=raw.height)
