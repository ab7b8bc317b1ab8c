"""The quote format's columns, allowed spellings and the row facts its rules and canonical columns share."""
import polars as pl

from flows.ingest.adapters import fields as f
from flows.ingest.adapters.base import FILE_SEEN_AT, FileContext
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


def price_per_gpu_hour() -> pl.Expr:
    """The quote's price per GPU-hour in its own currency (for the plausibility band only)."""
    unit_hours = f.enum_value(f.raw("price_unit"), TIME_UNITS).replace_strict(HOURS_PER, default=None,
                                                                               return_dtype=pl.Float64)
    per_node = f.enum_value(f.raw("price_scope"), SCOPES) == "per_node"
    gpus_per_node = f.as_count(f.raw("gpus_per_node")).cast(pl.Float64)
    per_gpu = f.as_float(f.raw("price")) / unit_hours
    return pl.when(per_node).then(per_gpu / gpus_per_node).otherwise(per_gpu)


def stated_vram_gb_per_gpu() -> pl.Expr:
    """Stated memory per GPU in GB: a per-node figure is divided by the GPU count."""
    stated = f.as_float(f.raw("vram_gb"))
    per_node = f.enum_value(f.raw("vram_scope").fill_null("per_gpu"), SCOPES) == "per_node"
    return pl.when(per_node).then(stated / f.as_count(f.raw("gpus_per_node"))).otherwise(stated)


def catalog_vram_gb() -> pl.Expr:
    """The catalog's marketed memory per GPU for the quoted model."""
    return f.gpu_model(f.raw("gpu_model")).replace_strict(f.catalog_memory_gb(), default=None,
                                                            return_dtype=pl.Float64)


def first_seen() -> pl.Expr:
    """When the row's file was first received (UTC)."""
    return f.as_utc_timestamp(pl.col(FILE_SEEN_AT))


def observed(ctx: FileContext) -> tuple[pl.Expr, pl.Expr]:
    """observed_at and its basis: the row's own time, else the source's defaults.observed_at, else when
    the bytes arrived: fetched from a URL (an observation) or landed from a file (no date known)."""
    stated = f.as_utc_timestamp(f.raw("observed_at"))
    default = ctx.defaults.get("observed_at")  # ISO UTC text, checked by flows/ingest/sources.py
    default_at = f.as_utc_timestamp(pl.lit(default, pl.String))
    arrived = "fetched_at" if ctx.original_path.startswith(("http://", "https://")) else "landed_at"
    basis = (pl.when(stated.is_not_null()).then(pl.lit("row"))
             .when(pl.lit(default is not None)).then(pl.lit("source_default"))
             .otherwise(pl.lit(arrived)))
    return pl.coalesce(stated, default_at, first_seen()), basis


def is_requested() -> pl.Expr:
    """The row is a request for quotation: no price yet, so the price rules do not apply."""
    return f.enum_value(f.raw("quote_status").fill_null("quoted"), QUOTE_STATUSES) == "requested"
