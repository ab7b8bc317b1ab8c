"""Read workloads.yaml into a frame that satisfies the Workload contract, or say which line is wrong."""
import csv
import json
from decimal import Decimal, InvalidOperation
from pathlib import Path

import pandera.polars as pa
import polars as pl

from flows.ingest import names
from flows.ingest.yaml_lines import load_yaml_with_lines
from models.workloads import CHECKPOINTING, QUANTITY, Workload
from provider_eval.errors import ConfigError
from provider_eval.paths import REFERENCE_DIR

# Memory-fit keys (docs/workloads.md) and the polars type each is read as.
FIT_KEYS = {"kv_precision": pl.String, "context_tokens": pl.Int64, "concurrency": pl.Int64, "engine": pl.String,
            "mode": pl.String, "gpu_memory_utilization": pl.Float64, "activation_checkpointing": pl.String,
            "lora_rank": pl.Int64}
KEYS = {"id", "kind", "description", "unit", "quantity", "model_id", "precision",
        "storage_gb", "egress_gb", "setup_hours", "match", "utilisation", "input_tokens", "output_tokens",
        "slo", "scenario", *FIT_KEYS}
# The load a workload runs under (docs/cost-model.md "Scenario"): only runs of that scenario count.
SCENARIOS = {"offline", "server", "interactive"}
MATCH_KEYS = {"workload_id", "shape_tolerance_pct"}
# Benchmark matching (docs/workloads.md): mean tokens per request within ±this % of the declared shape.
DEFAULT_SHAPE_TOLERANCE_PCT = 10
# SLO keys: a latency statistic the benchmark formats carry (benchmark_runs columns), as a ceiling in ms.
SLO_KEYS = {f"{metric}_{stat}_ms" for metric in ("ttft", "tpot", "itl", "e2el")
            for stat in ("mean", "median", "p90", "p95", "p99")}


MAX_QUANTITY = Decimal(10) ** (QUANTITY.precision - QUANTITY.scale)


def _decimal(value, field: str, where: str) -> Decimal:
    try:
        number = Decimal(str(value))
    except InvalidOperation:
        raise ConfigError(f"{where}: {field} {value!r} is not a number") from None
    if not number.is_finite():
        raise ConfigError(f"{where}: {field} {value!r} is not finite")
    if abs(number) >= MAX_QUANTITY:  # the column is DECIMAL(38, 6): a bigger value cannot be stored
        raise ConfigError(f"{where}: {field} {value!r} is too large (at most {MAX_QUANTITY:.0e})")
    return number


def _row(raw: dict, file: Path, wide_precisions: set[str]) -> dict:
    line = getattr(raw, "line", 0)
    where = f"{file}: line {line}"
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: each workload must be a mapping")
    unknown = set(raw) - KEYS
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {sorted(unknown)}; allowed: {sorted(KEYS)}")
    for key in ("id", "kind", "unit", "quantity"):
        if raw.get(key) in (None, ""):
            raise ConfigError(f"{where}: '{key}' is required")
    match = raw.get("match") or {}
    if not isinstance(match, dict) or set(match) - MATCH_KEYS:
        raise ConfigError(f"{where}: 'match' may only hold {sorted(MATCH_KEYS)}")
    tolerance = match.get("shape_tolerance_pct", DEFAULT_SHAPE_TOLERANCE_PCT)
    if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) or not 0 <= tolerance <= 100:
        raise ConfigError(f"{where}: match.shape_tolerance_pct {tolerance!r} must be a number from 0 to 100")
    _check_training_fields(raw, where, wide_precisions)
    scenario = raw.get("scenario")
    if scenario is not None and str(scenario).strip().lower() not in SCENARIOS:
        raise ConfigError(f"{where}: scenario {scenario!r} is not one of {sorted(SCENARIOS)}")
    model = names.resolve_model(raw.get("model_id"))
    return {
        "workload_id": str(raw["id"]), "kind": str(raw["kind"]), "description": raw.get("description"),
        "unit": str(raw["unit"]), "quantity": _decimal(raw["quantity"], "quantity", where),
        # A Hugging Face repo id names the catalog model it resolves to (flows/ingest/names.py);
        # a precision its suffix implies (-FP8, -MXFP4) stands when the workload states none.
        "model_id": model.model_id or raw.get("model_id"),
        "precision": raw.get("precision") or model.implied_precision,
        **{k: _decimal(raw.get(k, 0), k, where) for k in ("storage_gb", "egress_gb", "setup_hours")},
        "match_workload_id": match.get("workload_id"), "line": line,
        "utilisation": _decimal(raw.get("utilisation", 1), "utilisation", where),
        **{k: _fit_value(raw.get(k), k, t, where) for k, t in FIT_KEYS.items()},
        **{k: _fit_value(raw.get(k), k, pl.Int64, where) for k in ("input_tokens", "output_tokens")},
        "shape_tolerance_pct": float(tolerance),
        "slo_json": _slo_json(raw.get("slo"), where),
        "scenario": None if scenario is None else str(scenario).strip().lower(),
    }


def sixteen_bit_or_wider(reference_dir: Path = REFERENCE_DIR) -> set[str]:
    """Precisions of 2 or more bytes per parameter (precisions.csv): never a QLoRA base."""
    with (reference_dir / "precisions.csv").open(newline="", encoding="utf-8") as f:
        return {r["precision"].lower() for r in csv.DictReader(f) if Decimal(r["bytes_per_param"]) >= 2}


def qlora_base_problem(precision: str | None, wide_precisions: set[str]) -> str | None:
    """Why a QLoRA request's base precision is wrong, or None (unstated means nf4)."""
    if precision is not None and str(precision).strip().lower() in wide_precisions:
        return (f"QLoRA fine-tunes adapters on a quantised base (4-bit nf4 unless stated): a {precision} base is "
                "16-bit or wider; use mode: lora for a 16-bit base, or a 4-bit precision such as nf4")
    return None


def _check_training_fields(raw: dict, where: str, wide_precisions: set[str]) -> None:
    """activation_checkpointing is one of its modes; a QLoRA workload has no 16-bit base."""
    checkpointing = raw.get("activation_checkpointing")
    if checkpointing is not None and (not isinstance(checkpointing, str) or checkpointing.strip().lower() not in CHECKPOINTING):
        raise ConfigError(f"{where}: activation_checkpointing {checkpointing!r} must be one of {', '.join(CHECKPOINTING)} "
                          "(true/false are ambiguous: Hugging Face's gradient_checkpointing=True is full recomputation)")
    if str(raw.get("mode") or "").strip().lower() == "qlora":
        problem = qlora_base_problem(raw.get("precision"), wide_precisions)
        if problem:
            raise ConfigError(f"{where}: precision {raw.get('precision')!r}: {problem}")


def _slo_json(slo, where: str) -> str | None:
    """The workload's SLOs as a JSON object {latency column: ceiling in ms}, or a ConfigError naming the key."""
    if slo is None:
        return None
    if not isinstance(slo, dict) or not slo:
        raise ConfigError(f"{where}: 'slo' must be a mapping such as {{ttft_p99_ms: 2000, tpot_mean_ms: 50}}")
    out = {}
    for key, value in slo.items():
        if key not in SLO_KEYS:
            raise ConfigError(f"{where}: unknown SLO {key!r}; allowed: {sorted(SLO_KEYS)}")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < float("inf"):
            raise ConfigError(f"{where}: slo.{key} {value!r} must be a positive number of milliseconds")
        out[key] = float(value)
    return json.dumps(out, sort_keys=True)


def _fit_value(value, field: str, dtype, where: str):
    """A memory-fit field as its type, or a ConfigError naming the line and field."""
    if value is None:
        return None
    if dtype == pl.Boolean:
        if not isinstance(value, bool):
            raise ConfigError(f"{where}: {field} {value!r} must be true or false")
        return value
    if dtype == pl.Int64:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{where}: {field} {value!r} must be a whole number")
        return value
    if dtype == pl.Float64:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{where}: {field} {value!r} must be a number")
        return float(value)
    return str(value).strip().lower()


def load_workloads(file: Path, reference_dir: Path = REFERENCE_DIR) -> pl.DataFrame:
    """Parse and validate workloads.yaml; problems raise ConfigError naming the line and field."""
    doc = load_yaml_with_lines(file)
    if not isinstance(doc, dict) or not isinstance(doc.get("workloads"), list) or not doc["workloads"]:
        raise ConfigError(f"{file}: expected a non-empty top-level 'workloads:' list")
    wide = sixteen_bit_or_wider(reference_dir)
    rows = [_row(raw, file, wide) for raw in doc["workloads"]]
    schema = {"workload_id": pl.String, "kind": pl.String, "description": pl.String, "unit": pl.String,
              "quantity": QUANTITY, "model_id": pl.String, "precision": pl.String,
              "storage_gb": QUANTITY, "egress_gb": QUANTITY, "setup_hours": QUANTITY,
              "match_workload_id": pl.String, "line": pl.Int64, "utilisation": QUANTITY, **FIT_KEYS,
              "input_tokens": pl.Int64, "output_tokens": pl.Int64, "shape_tolerance_pct": pl.Float64,
              "slo_json": pl.String, "scenario": pl.String}
    frame = pl.DataFrame(rows, schema=schema)
    try:
        return Workload.validate(frame, lazy=True)
    except pa.errors.SchemaErrors as exc:
        problems = []
        for case in exc.failure_cases.iter_rows(named=True):
            idx = case["index"]
            line = rows[idx]["line"] if idx is not None else "?"
            problems.append(f"line {line}: {case['column']} {case['failure_case']!r} fails {case['check']}")
        raise ConfigError(f"{file}: " + "; ".join(problems)) from None
