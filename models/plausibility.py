"""Plausibility floors and ceilings (data/reference/plausibility_limits.csv): outside them a value is
physically impossible, so its row is quarantined as IMPLAUSIBLE_VALUE (docs/quarantine.md)."""
import functools
import polars as pl

from provider_eval import reference
IMPLAUSIBLE = "IMPLAUSIBLE_VALUE"  # pandera check names start with it; validation maps them to this code


@functools.cache
def limit(name: str) -> tuple[float | None, float | None]:
    """(min, max) of one named limit; None where the file leaves it open."""
    rows = {r["limit"]: r for r in reference.rows("plausibility_limits.csv")}
    row = rows[name]
    return (float(row["min_value"]) if row["min_value"] else None,
            float(row["max_value"]) if row["max_value"] else None)


@functools.cache
def _peak_flops() -> dict[str, float]:
    """GPU model → its highest dense peak (bf16/fp8/fp4) × 2 for structured sparsity, in FLOP/s."""
    out = {}
    for row in reference.rows("gpus.csv"):
        peaks = [float(row[c]) for c in ("bf16_dense_tflops", "fp8_dense_tflops", "fp4_dense_tflops") if row[c]]
        if peaks:
            out[row["gpu_model"]] = 2 * max(peaks) * 1e12
    return out


@functools.cache
def _active_params() -> dict[str, float]:
    """Model id and Hugging Face name (lower case) → active parameters."""
    out = {}
    for row in reference.rows("llm_models.csv"):
        params = row["params_active"] or row["params_total"]
        if params:
            out[row["model_id"].lower()] = float(params)
            out[row["hf_name"].lower()] = float(params)
    return out


def tokens_per_s_per_gpu_ceiling() -> pl.Expr:
    """The most tokens/s one GPU can process for the row's model: sparse peak FLOP/s / (2 FLOPs ×
    params_active), else the generic ceiling when the model or the GPU is not in the catalog."""
    peak = pl.col("gpu_model").replace_strict(_peak_flops(), default=None, return_dtype=pl.Float64)
    params = pl.col("model_id").str.to_lowercase().replace_strict(_active_params(), default=None,
                                                                  return_dtype=pl.Float64)
    return pl.coalesce(peak / (2 * params), pl.lit(limit("tokens_per_s_per_gpu_generic")[1]))
