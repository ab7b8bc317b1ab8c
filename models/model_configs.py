"""Contract for model configs: one row per LLM a user declared by its Hugging Face config.json."""
import pandera.polars as pa
import polars as pl

from models.common import Lineage

MAX_DIM = 10**7        # no real layer count, width or vocabulary comes near
MAX_PARAMS = 10**14    # 100 T parameters


def _dim(nullable: bool = False):
    """A positive architecture dimension (layers, heads, widths), bounded so overflow cannot pass."""
    return pa.Field(nullable=nullable, ge=1, le=MAX_DIM)


class ModelConfig(Lineage):
    """The architecture facts the memory formulas need, as the llm_models.csv catalog holds them."""

    model_id: str = pa.Field(str_matches=r"^[a-z0-9][a-z0-9._-]*$")
    hf_name: str = pa.Field(nullable=True)
    params_total: pl.Int64 = pa.Field(ge=1, le=MAX_PARAMS)
    params_active: pl.Int64 = pa.Field(ge=1, le=MAX_PARAMS)
    # 'computed' (docs/formats/model-config.md formula) or 'stated' (sources.yaml defaults).
    params_basis: str = pa.Field(isin=["computed", "stated"])
    layers: pl.Int64 = _dim()
    hidden_size: pl.Int64 = _dim()
    attention_heads: pl.Int64 = _dim()
    kv_heads: pl.Int64 = _dim(nullable=True)
    head_dim: pl.Int64 = _dim(nullable=True)
    attention: str = pa.Field(isin=["gqa", "mla"])
    kv_lora_rank: pl.Int64 = _dim(nullable=True)
    qk_rope_head_dim: pl.Int64 = _dim(nullable=True)
    intermediate_size: pl.Int64 = _dim(nullable=True)
    moe_intermediate_size: pl.Int64 = _dim(nullable=True)
    experts: pl.Int64 = _dim(nullable=True)
    experts_per_token: pl.Int64 = _dim(nullable=True)
    vocab_size: pl.Int64 = _dim()
    max_context: pl.Int64 = _dim()
    native_context_tokens: pl.Int64 = _dim()
    rope_scaling: str = pa.Field(nullable=True)
    sliding_window_tokens: pl.Int64 = _dim(nullable=True)
    source: str = pa.Field(str_length={"min_value": 1})
