"""Polars expressions that turn raw text cells into typed canonical fields, and the rules around them."""
from functools import lru_cache

import polars as pl

from flows.ingest import names
from flows.ingest.adapters.row_rules import Rule
from provider_eval import reference

# A monthly price is per this many hours, a month-long term this long (conventions.csv, docs/cost-model.md).
HOURS_PER_MONTH = int(reference.convention("hours_per_month"))
MAX_MONEY = 1e12  # larger amounts do not fit DECIMAL(18,6); no real quote comes near
PLAIN_DECIMAL = r"^-?(\d+\.?\d*|\.\d+)$"


def raw(name: str) -> pl.Expr:
    """The raw text cell of a column."""
    return pl.col(f"raw_{name}")


def with_default(name: str, defaults: dict) -> pl.Expr:
    """The file's value, or the source-level default when the file has none."""
    default = defaults.get(name)
    expr = raw(name)
    return expr if default is None else expr.fill_null(pl.lit(str(default)))


def default_conflict_rules(names: list[str], defaults: dict) -> list[Rule]:
    """A value in the file that contradicts the source's default is quarantined, not overridden."""
    rules = []
    for name in names:
        if defaults.get(name) is None:
            continue
        default = str(defaults[name])
        rules.append(Rule(
            "DEFAULT_CONFLICT",
            raw(name).is_not_null() & (raw(name) != default),
            pl.format("{} is '{}' in the file but '{}' in sources.yaml defaults", pl.lit(name), raw(name), pl.lit(default)),
        ))
    return rules


def required_rule(name: str, expr: pl.Expr) -> Rule:
    """A field that must be present."""
    return Rule("FIELD_MISSING", expr.is_null(), pl.lit(f"{name} is empty"))


def as_float(expr: pl.Expr) -> pl.Expr:
    """Text → float, null where it is not a number (NaN and Inf survive, to be named)."""
    return expr.cast(pl.Float64, strict=False)


def as_money(expr: pl.Expr) -> pl.Expr:
    """Text → DECIMAL(18,6); non-numbers and non-finite values become null (rules say why)."""
    return expr.cast(pl.Decimal(18, 6), strict=False)


def money_rules(name: str, expr: pl.Expr, prefix: str, allow_zero: bool) -> list[Rule]:
    """Name every way a money cell can be wrong: not a number, NaN/Inf, zero, negative, huge."""
    value = as_float(expr)
    nonfinite = value.is_nan() | value.is_infinite()
    rules = [
        # Only plain decimals: '2,49', '2.490,00', '1e3' and '2.49 USD' need a locale rule we do not guess.
        Rule(f"{prefix}_NOT_NUMERIC", expr.is_not_null() & ~expr.str.contains(PLAIN_DECIMAL) & ~nonfinite.fill_null(False),
             pl.format("{} '{}' is not a plain decimal number (digits, optional '-' and '.')", pl.lit(name), expr)),
        Rule(f"{prefix}_NONFINITE", nonfinite,
             pl.format("{} '{}' is not finite", pl.lit(name), expr)),
        Rule(f"{prefix}_NONPOSITIVE", value < 0, pl.format("{} {} is negative", pl.lit(name), expr)),
        Rule(f"{prefix}_OUT_OF_RANGE", value.is_finite() & (value >= MAX_MONEY),
             pl.format("{} {} is implausibly large", pl.lit(name), expr)),
    ]
    if not allow_zero:
        rules.insert(3, Rule(f"{prefix}_PLACEHOLDER", value == 0,
                             pl.format("{} {} is a zero placeholder, not a price", pl.lit(name), expr)))
    return rules


MAX_COUNT = 2**31 - 1  # counts are stored as 32-bit integers; a bigger one is no count of real things


def as_count(expr: pl.Expr) -> pl.Expr:
    """Text → positive integer that fits 32 bits; '3.5', 'eight', '0', '-1' and '3000000000' become null."""
    value = expr.cast(pl.Int64, strict=False)
    return pl.when(expr.str.contains(r"^\d+$") & (value > 0) & (value <= MAX_COUNT)).then(value).otherwise(None)


def enum_value(expr: pl.Expr, aliases: dict[str, str]) -> pl.Expr:
    """Lower-cased text mapped through an alias table; anything else becomes null."""
    return expr.str.to_lowercase().replace_strict(aliases, default=None, return_dtype=pl.String)


# ISO-8601 with an offset ('Z' is rewritten as +00:00): 'T' or space, minutes or seconds, any fraction.
# Given explicitly, because without a format polars infers one from the column's first value, and a
# row's timestamp would then depend on the rows above it (and on which files are parsed together).
TIMESTAMP_FORMATS = [f"%Y-%m-%d{sep}%H:%M{secs}{zone}" for sep in ("T", " ") for secs in (":%S%.f", "")
                     for zone in ("%:z", "%z")]


UTC_TIMESTAMP = pl.Datetime("us", "UTC")


def _parse_utc(expr: pl.Expr) -> pl.Expr:
    """as_utc_timestamp evaluated on every row: each of TIMESTAMP_FORMATS tried (coalesce runs them all)."""
    has_zone = expr.str.contains(r"(Z|[+-]\d{2}:?\d{2})$")
    text = expr.str.replace(r"Z$", "+00:00")
    parsed = pl.coalesce([text.str.to_datetime(fmt, time_zone="UTC", strict=False, time_unit="us")
                          for fmt in TIMESTAMP_FORMATS])
    return pl.when(has_zone).then(parsed).otherwise(None)


def _parse_utc_distinct(s: pl.Series) -> pl.Series:
    """_parse_utc of a column, each distinct text parsed once (unless most are distinct)."""
    distinct = s.unique()
    if distinct.len() * 2 > s.len():
        return s.to_frame("text").select(_parse_utc(pl.col("text"))).to_series()
    parsed = distinct.to_frame("text").with_columns(_parse_utc(pl.col("text")).alias("at"))
    return s.to_frame("text").join(parsed, on="text", how="left", nulls_equal=True, maintain_order="left")["at"]


def as_utc_timestamp(expr: pl.Expr) -> pl.Expr:
    """ISO-8601 text with an explicit offset or Z → UTC timestamp; naive or malformed → null."""
    # Timestamps repeat: a scrape stamps its rows alike, a file's arrival time is one value per file.
    # Trying eight formats on every row was half of a quote batch's canonical step (1.1 µs a row).
    return expr.cast(pl.String).map_batches(_parse_utc_distinct, return_dtype=UTC_TIMESTAMP, is_elementwise=True)


def as_date(expr: pl.Expr) -> pl.Expr:
    """ISO date text (YYYY-MM-DD) → date; anything else → null."""
    return expr.str.to_date("%Y-%m-%d", strict=False)


def _per_name(expr: pl.Expr, lookup) -> pl.Expr:
    """lookup(name) for every cell, computed once per distinct name (a file repeats a few names)."""
    def per_batch(s: pl.Series) -> pl.Series:
        looked_up = {v: lookup(v) for v in s.drop_nulls().unique().to_list()}
        if not looked_up:
            return s  # only nulls: already the all-null answer
        return s.replace_strict(looked_up, default=None, return_dtype=pl.String)
    return expr.cast(pl.String).map_batches(per_batch, return_dtype=pl.String)


def _resolved(expr: pl.Expr, field: str) -> pl.Expr:
    """One field of flows.ingest.names.resolve_gpu (gpu_model, reason_code, detail) per cell."""
    return _per_name(expr, lambda v: getattr(names.resolve_gpu(v), field))


@lru_cache(maxsize=1)
def known_currencies() -> tuple[str, ...]:
    """Currencies with a dated FX rate in data/reference/fx_rates.csv."""
    return tuple(sorted({row["currency"] for row in reference.rows("fx_rates.csv")}))


def gpu_model(expr: pl.Expr) -> pl.Expr:
    """Any GPU name → catalog gpu_model by the rules of flows/ingest/names.py; unresolved → null, never guessed."""
    return _resolved(expr, "gpu_model")


def gpu_rules(expr: pl.Expr) -> list[Rule]:
    """GPU names must be present and resolve (names.py): unknown, ambiguous or memory-contradicting names fail."""
    code, detail = _resolved(expr, "reason_code"), _resolved(expr, "detail")
    return [
        Rule("FIELD_MISSING", expr.is_null() | (code == "FIELD_MISSING").fill_null(False),
             pl.lit("gpu_model is empty")),
        # 'H100' could be SXM, PCIe or NVL (different memory, bandwidth, price): never guessed.
        *[Rule(reason, expr.is_not_null() & (code == reason).fill_null(False), detail)
          for reason in ("GPU_VARIANT_UNKNOWN", "GPU_ALIAS_UNKNOWN", "VRAM_MISMATCH")],
    ]


def declared_models(defaults: dict) -> tuple:
    """The (name, model_id) pairs model-config sources declare, as sources.py hands them on."""
    return tuple(tuple(pair) for pair in defaults.get("declared_models") or ())


def _model_field(expr: pl.Expr, field: str, declared: tuple) -> pl.Expr:
    """One field of flows.ingest.names.resolve_model (model_id, implied_precision) per cell."""
    return _per_name(expr, lambda v: getattr(names.resolve_model(v, declared=declared), field))


def model_id(expr: pl.Expr, declared: tuple = ()) -> pl.Expr:
    """A model name or Hugging Face repo id → catalog (or declared) model_id (names.py rules); unknown → null."""
    return _model_field(expr, "model_id", declared)


def precision_from_model(precision: pl.Expr, model: pl.Expr, declared: tuple = ()) -> pl.Expr:
    """The stated precision, else the one the model name's suffix implies (-FP8, -MXFP4, -AWQ)."""
    return pl.coalesce(precision, _model_field(model, "implied_precision", declared))


def model_rules(expr: pl.Expr, declared: tuple = ()) -> list[Rule]:
    """A stated model must resolve to the LLM catalog or a declared model: else it could never match a workload."""
    stated = expr.is_not_null() & (expr.str.strip_chars() != "")
    return [Rule("MODEL_UNKNOWN", stated & model_id(expr, declared).is_null(),
                 pl.format("model '{}' is not in data/reference/llm_models.csv (model_id, hf_name or hf_repo_ids, "
                           "after the suffix rules in docs/quarantine.md) nor declared by a model-config source",
                           expr))]


CURRENCY_SYMBOLS = {"$": "USD", "us$": "USD", "usd": "USD", "€": "EUR", "eur": "EUR", "£": "GBP", "gbp": "GBP"}


def currency(expr: pl.Expr) -> pl.Expr:
    """Currency code or symbol → ISO code with a known FX rate; otherwise null."""
    code = expr.str.to_lowercase().replace(CURRENCY_SYMBOLS).str.to_uppercase()
    return pl.when(code.is_in(list(known_currencies()))).then(code).otherwise(None)


@lru_cache(maxsize=1)
def catalog_memory_gb() -> dict[str, float]:
    """Catalog gpu_model → marketed memory per GPU in GB, from data/reference/gpus.csv."""
    return {row["gpu_model"]: float(row["memory_gb_marketed"]) for row in reference.rows("gpus.csv")
            if row.get("memory_gb_marketed")}
