"""Contract for quote observations: one row per offer × billing option as seen in one file."""
import datetime as dt
from decimal import Decimal

import pandera.polars as pa
import polars as pl
from pandera.api.polars.types import PolarsData

from models import vocabulary as v
from models.common import Lineage
from models.plausibility import IMPLAUSIBLE, limit

MONEY = pl.Decimal(18, 6)
MAX_GPUS_PER_NODE = int(limit("gpus_per_node")[1])


class QuoteObservation(Lineage):
    """A vendor's price for a rentable configuration, in its own currency and unit."""

    provider: str = pa.Field(str_length={"min_value": 1})
    offer_id: str = pa.Field(str_length={"min_value": 1})
    gpu_model: str = pa.Field(str_length={"min_value": 1})
    gpu_name_raw: str
    # At most data/reference/plausibility_limits.csv gpus_per_node (64: no server holds more): below.
    gpus_per_node: pl.Int32 = pa.Field(ge=1)
    billing_model: str = pa.Field(isin=v.BILLING_MODELS)
    # Decimal bounds: finite by construction; gt=0 is safe here (it is not on floats: NaN/Inf pass).
    # Null only on a requested quote (quote_status = requested); the check below holds quoted rows to it.
    price_amount: MONEY = pa.Field(nullable=True, gt=Decimal(0), lt=Decimal(10**12))
    currency: str = pa.Field(nullable=True, str_matches=r"^[A-Z]{3}$")
    price_unit: str = pa.Field(nullable=True, isin=v.TIME_UNITS)
    price_scope: str = pa.Field(nullable=True, isin=v.PRICE_SCOPES)
    billing_granularity: str = pa.Field(isin=v.TIME_UNITS)
    min_term_hours: MONEY = pa.Field(ge=Decimal(0))
    storage_per_gb_month: MONEY = pa.Field(ge=Decimal(0))
    egress_per_gb: MONEY = pa.Field(ge=Decimal(0))
    licence_per_hour: MONEY = pa.Field(ge=Decimal(0))
    setup_fee: MONEY = pa.Field(ge=Decimal(0))
    support_per_month: MONEY = pa.Field(ge=Decimal(0))
    valid_from: dt.date = pa.Field(nullable=True)
    valid_until: dt.date = pa.Field(nullable=True)
    observed_at: pl.Datetime("us", "UTC")
    region: str = pa.Field(nullable=True)
    notes: str = pa.Field(nullable=True)
    rocm_version: str = pa.Field(nullable=True, str_matches=r"^\d+\.\d+(\.\d+)?$")
    os: str = pa.Field(nullable=True)
    kernel: str = pa.Field(nullable=True)
    amdgpu_driver_version: str = pa.Field(nullable=True)
    tier: str = pa.Field(nullable=True, isin=v.TIERS)
    commitment_term_hours: MONEY = pa.Field(nullable=True, gt=Decimal(0))
    vram_bytes_stated: pl.Int64 = pa.Field(nullable=True, gt=0)
    observed_at_stated: bool
    # Where observed_at came from (docs/inputs.md "When a price was observed"): only landed_at is undated.
    observed_at_basis: str = pa.Field(isin=v.OBSERVED_AT_BASES)
    max_quote_age_days: pl.Int32 = pa.Field(nullable=True, ge=0)
    quote_status: str = pa.Field(isin=v.QUOTE_STATUSES)
    requested_on: dt.date = pa.Field(nullable=True)
    cpu_model: str = pa.Field(nullable=True)
    cpu_cores: pl.Int32 = pa.Field(nullable=True, ge=1)
    system_ram_bytes: pl.Int64 = pa.Field(nullable=True, gt=0)
    nvme_bytes: pl.Int64 = pa.Field(nullable=True, gt=0)
    interconnect: str = pa.Field(nullable=True)
    network_gbps: MONEY = pa.Field(nullable=True, gt=Decimal(0))
    virtualisation: str = pa.Field(nullable=True, isin=v.VIRTUALISATIONS)
    software_tested: str = pa.Field(nullable=True)
    cost_lines_stated: bool

    @pa.check("gpus_per_node", name=f"{IMPLAUSIBLE}: gpus_per_node above {MAX_GPUS_PER_NODE} GPUs per node")
    def gpus_per_node_plausible(cls, data: PolarsData) -> pl.LazyFrame:
        """No server holds more GPUs (IMPLAUSIBLE_VALUE, docs/quarantine.md)."""
        return data.lazyframe.select(pl.col("gpus_per_node") <= MAX_GPUS_PER_NODE)

    @pa.check("quote_status", name="quoted_rows_have_a_price")
    def quoted_rows_have_a_price(cls, data: PolarsData) -> pl.LazyFrame:
        """A quoted row has a price, currency, unit and scope; a requested row has no price."""
        priced = pl.all_horizontal(pl.col(c).is_not_null()
                                   for c in ("price_amount", "currency", "price_unit", "price_scope"))
        return data.lazyframe.select(
            pl.when(pl.col("quote_status") == "requested").then(pl.col("price_amount").is_null())
            .otherwise(priced)
        )

    class Config:
        strict = True
        unique = ["source_name", "file_sha256", "offer_id", "billing_model", "tier", "commitment_term_hours"]
