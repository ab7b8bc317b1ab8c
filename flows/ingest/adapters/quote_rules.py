"""Why a quote row is quarantined: each rule is a reason code, a condition and a message (docs/quarantine.md)."""
import polars as pl

from flows.ingest import names
from flows.ingest.adapters import fields as f
from flows.ingest.adapters.base import FILE_SEEN_AT, FileContext
from flows.ingest.adapters.row_rules import Rule
from flows.ingest.adapters.quote_columns import (
    BILLING_MODELS, COST_LINES, EARLIEST_QUOTE_DATE, MAX_SPEC_GB, PLAUSIBLE_PER_GPU_HOUR,
    QUOTE_STATUSES, SCOPES, SPEC_NUMBERS, TIERS, TIME_UNITS, VIRTUALISATION, catalog_vram_gb, first_seen,
    is_requested, price_per_gpu_hour, stated_vram_gb_per_gpu)


def _time_rules() -> list[Rule]:
    """Timestamps need an offset; dates are ISO; none in the future or before the catalog's era."""
    seen = first_seen()
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


def _only_when_priced(rules: list[Rule]) -> list[Rule]:
    """Price rules hold for quoted rows; a requested row has no price, unit or scope to check."""
    return [Rule(r.reason_code, r.failed & ~is_requested(), r.detail) for r in rules]


def _request_rules() -> list[Rule]:
    """A requested row states when it was asked and carries no price; a quoted row needs one."""
    requested = is_requested()
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


def row_rules(ctx: FileContext) -> list[Rule]:
    """Every rule a quote row must pass, with the source's defaults applied."""
    defaults = ctx.defaults
    provider = f.with_default("provider", defaults)
    cur = f.with_default("currency", defaults)
    band = price_per_gpu_hour()
    stated_vram, catalog_vram = stated_vram_gb_per_gpu(), catalog_vram_gb()
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
        Rule("CURRENCY_UNKNOWN", is_requested() & cur.is_not_null() & f.currency(cur).is_null(),
             pl.format("currency '{}' has no FX rate in data/reference/fx_rates.csv", cur)),
        Rule("UNIT_UNKNOWN", f.raw("price_unit").is_not_null() & f.enum_value(f.raw("price_unit"), TIME_UNITS).is_null(),
             pl.format("price_unit '{}' is not second/minute/hour/month", f.raw("price_unit"))),
        *_only_when_priced([
            Rule("SCOPE_UNKNOWN", f.enum_value(f.raw("price_scope"), SCOPES).is_null(),
                 pl.format("price_scope '{}' is not per_gpu or per_node", f.raw("price_scope").fill_null("(empty)"))),
        ]),
        Rule("SCOPE_UNKNOWN", is_requested() & f.raw("price_scope").is_not_null()
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
