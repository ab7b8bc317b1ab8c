"""Read workloads.yaml into a frame that satisfies the Workload contract, or say which line is wrong."""
import json
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Annotated, Any, ClassVar

import pandera.polars as pa
import polars as pl
from pydantic import BeforeValidator, Field, ValidationInfo, create_model, model_validator

from flows.ingest import names
from flows.ingest.config_models import ConfigModel, checked, fail, is_number, is_whole, validate
from flows.ingest.yaml_lines import load_yaml_with_lines
from models import vocabulary
from models.workloads import CHECKPOINTING, QUANTITY, Workload
from provider_eval.errors import ConfigError
from provider_eval import progress, reference
from provider_eval.paths import REFERENCE_DIR

# Memory-fit keys (docs/workloads.md) and the polars type each is read as.
FIT_KEYS = {"kv_precision": pl.String, "context_tokens": pl.Int64, "concurrency": pl.Int64, "engine": pl.String,
            "mode": pl.String, "gpu_memory_utilization": pl.Float64, "activation_checkpointing": pl.String,
            "lora_rank": pl.Int64}
# The load a workload runs under (docs/cost-model.md "Scenario"): only runs of that scenario count.
SCENARIOS = set(vocabulary.SCENARIOS)
# Benchmark matching (docs/workloads.md): mean tokens per request within ±this % of the declared shape.
DEFAULT_SHAPE_TOLERANCE_PCT = 10
# SLO keys: a latency statistic the benchmark formats carry (benchmark_runs columns), as a ceiling in ms.
SLO_KEYS = {f"{metric}_{stat}_ms" for metric in vocabulary.LATENCY_METRICS
            for stat in vocabulary.LATENCY_STATS if stat != "std"}
MAX_QUANTITY = Decimal(10) ** (QUANTITY.precision - QUANTITY.scale)


def _decimal(value) -> Decimal:
    """A quantity as DECIMAL(38, 6) can store it (finite, under 1e32)."""
    try:
        number = Decimal(str(value))
    except InvalidOperation:
        fail("{key} {value} is not a number")
    if not number.is_finite():
        fail("{key} {value} is not finite")
    if abs(number) >= MAX_QUANTITY:  # the column is DECIMAL(38, 6): a bigger value cannot be stored
        fail(f"{{key}} {{value}} is too large (at most {MAX_QUANTITY:.0e})")
    return number


def _required(convert):
    """A before-validator: no value (or an empty one) is "'key' is required", else `convert(value)`."""
    def check(value):
        if value in (None, ""):
            fail("'{key}' is required")
        return convert(value)
    return BeforeValidator(check)


def _lower(value) -> str:
    return str(value).strip().lower()


Amount = Annotated[Decimal, BeforeValidator(_decimal)]
Label = Annotated[str, _required(str)]  # whatever is written, as text (the contract checks it)
Text = checked(str, lambda v: not isinstance(v, (dict, list)), "{key} must be a single value, got {value}",
               convert=str)
Lowered = checked(str, lambda v: not isinstance(v, (dict, list)), "{key} must be a single value, got {value}",
                  convert=_lower)
Whole = checked(int, is_whole, "{key} {value} must be a whole number")
Number = checked(float, is_number, "{key} {value} must be a number", convert=float)
Percent = checked(float, lambda v: is_number(v) and 0 <= v <= 100, "{key} {value} must be a number from 0 to 100",
                  convert=float, none=False)
Scenario = checked(str, lambda v: _lower(v) in SCENARIOS, "{key} {value} is not one of " + str(sorted(SCENARIOS)),
                   convert=_lower)
Checkpointing = checked(str, lambda v: isinstance(v, str) and _lower(v) in CHECKPOINTING,
                        "{key} {value} must be one of " + ", ".join(CHECKPOINTING)
                        + " (true/false are ambiguous: Hugging Face's gradient_checkpointing=True is full recomputation)",
                        convert=_lower)
Millis = checked(float, lambda v: is_number(v) and 0 < v < float("inf"),
                 "{key} {value} must be a positive number of milliseconds", convert=float, none=False)


class Match(ConfigModel):
    """Which benchmark runs count for a workload (docs/workloads.md)."""

    unknown_keys: ClassVar[str] = "'match' may only hold {allowed}, not {unknown}"
    workload_id: Text = None
    shape_tolerance_pct: Percent = DEFAULT_SHAPE_TOLERANCE_PCT


Positive = checked(Decimal, lambda v: is_number(v) and 0 < v < float("inf"), "{key} {value} must be a positive number",
                   convert=_decimal)
Fraction = checked(Decimal, lambda v: is_number(v) and 0 <= v < float("inf"), "{key} {value} must be a number ≥ 0",
                   convert=_decimal, none=False)


class Sustained(ConfigModel):
    """A rate over a period (docs/workloads.md "Sustained demand"): units per month for some months."""

    unknown_keys: ClassVar[str] = "'sustained' may only hold {allowed}, not {unknown}"
    units_per_month: Annotated[Decimal, _required(_decimal)]
    months: Whole = None
    peak_units_per_hour: Positive = None

    @model_validator(mode="after")
    def _positive(self):
        if self.units_per_month <= 0:
            fail(f"sustained.units_per_month {self.units_per_month} must be > 0")
        if self.months is None or self.months <= 0:
            fail("sustained.months must be a whole number of months > 0")
        return self


class SpotInterruptions(ConfigModel):
    """A user's own assumption about one provider's spot interruptions (never a default: docs/workloads.md)."""

    unknown_keys: ClassVar[str] = "each 'spot_interruptions' item may only hold {allowed}, not {unknown}"
    provider: Label
    interruptions_per_hour: Fraction
    lost_hours_per_interruption: Fraction
    source: Label  # where the assumption comes from: an assumption without one is refused

    @model_validator(mode="after")
    def _some_work_survives(self):
        # Expected hours = need / (1 − λ·L): at λ·L ≥ 1 the job never finishes.
        if self.interruptions_per_hour * self.lost_hours_per_interruption >= 1:
            fail("interruptions_per_hour × lost_hours_per_interruption must be below 1 (otherwise no work survives)")
        return self


class _SloBase(ConfigModel):
    unknown_keys: ClassVar[str] = "unknown SLO {names}; allowed: {allowed}"
    not_a_mapping: ClassVar[str] = "'slo' must be a mapping such as {ttft_p99_ms: 2000, tpot_mean_ms: 50}"

    @model_validator(mode="after")
    def _not_empty(self):
        if not self.model_fields_set:
            fail(self.not_a_mapping)
        return self


# The SLOs a run must meet: {latency column: ceiling in ms}, each optional.
Slo = create_model("Slo", __base__=_SloBase, __doc__="A workload's SLOs (ceilings in ms).",
                   **{key: (Millis, None) for key in sorted(SLO_KEYS)})


class WorkloadEntry(ConfigModel):
    """One item of `workloads:` as written (docs/workloads.md)."""

    not_a_mapping: ClassVar[str] = "each workload must be a mapping"
    id: Label
    kind: Label
    description: Text = None
    unit: Label
    # Required unless `sustained` gives it (units_per_month × months).
    quantity: Annotated[Decimal | None, BeforeValidator(lambda v: _required(_decimal).func(v) if v == "" else
                                                        None if v is None else _decimal(v))] = None
    # Deadline (docs/workloads.md "Deadline"): the quantity must be done within this many hours.
    deadline_hours: Positive = None
    sustained: Sustained | None = None
    spot_interruptions: list[SpotInterruptions] | None = None
    # A Hugging Face repo id names the catalog model it resolves to (flows/ingest/names.py).
    model_id: Text = None
    precision: Text = None
    storage_gb: Amount = Decimal(0)
    egress_gb: Amount = Decimal(0)
    setup_hours: Amount = Decimal(0)
    match: Match | None = None
    # Share of rented time doing useful work (docs/cost-model.md).
    utilisation: Amount = Decimal(1)
    input_tokens: Whole = None
    output_tokens: Whole = None
    slo: Slo | None = None
    scenario: Scenario = None
    # Memory fit (docs/feasibility.md).
    kv_precision: Lowered = None
    context_tokens: Whole = None
    concurrency: Whole = None
    engine: Lowered = None
    mode: Lowered = None
    gpu_memory_utilization: Number = None
    activation_checkpointing: Checkpointing = None
    lora_rank: Whole = None

    @model_validator(mode="after")
    def _demand(self):
        if self.sustained is not None:
            if self.deadline_hours is not None:
                fail("a workload is either sustained (a rate over months) or has a deadline_hours, not both")
            total = self.sustained.units_per_month * self.sustained.months
            if self.quantity is not None and self.quantity != total:
                fail(f"quantity {self.quantity} is not sustained.units_per_month × months = {total}; leave it out")
            self.quantity = total
        elif self.quantity is None:
            fail("'quantity' is required")
        if self.spot_interruptions:
            providers = [p.provider.lower() for p in self.spot_interruptions]
            if len(set(providers)) < len(providers):
                fail("spot_interruptions names a provider twice")
        return self

    @model_validator(mode="after")
    def _qlora_base(self, info: ValidationInfo):
        if self.mode == "qlora":
            problem = qlora_base_problem(self.precision, (info.context or {}).get("wide_precisions", set()))
            if problem:
                fail(f"precision {self.precision!r}: {problem}")
        return self

    def row(self) -> dict[str, Any]:
        """This workload as a row of the Workload contract."""
        resolved = names.resolve_model(self.model_id)
        match = self.match or Match()
        slo = self.slo.model_dump(exclude_unset=True) if self.slo else None
        return {
            "workload_id": self.id, "kind": self.kind, "description": self.description, "unit": self.unit,
            "quantity": self.quantity,
            # A precision the repo id's suffix implies (-FP8, -MXFP4) stands when the workload states none.
            "model_id": resolved.model_id or self.model_id, "precision": self.precision or resolved.implied_precision,
            "storage_gb": self.storage_gb, "egress_gb": self.egress_gb, "setup_hours": self.setup_hours,
            "match_workload_id": match.workload_id, "line": self.line, "utilisation": self.utilisation,
            **{key: getattr(self, key) for key in FIT_KEYS},
            "input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
            "shape_tolerance_pct": float(match.shape_tolerance_pct),
            "slo_json": json.dumps(slo, sort_keys=True) if slo else None, "scenario": self.scenario,
            "demand_kind": "sustained" if self.sustained else "deadline" if self.deadline_hours else "fixed",
            "deadline_hours": self.deadline_hours,
            "units_per_month": self.sustained.units_per_month if self.sustained else None,
            "period_months": self.sustained.months if self.sustained else None,
            "peak_units_per_hour": self.sustained.peak_units_per_hour if self.sustained else None,
            "spot_interruptions_json": json.dumps(
                [{"provider": p.provider, "interruptions_per_hour": str(p.interruptions_per_hour),
                  "lost_hours_per_interruption": str(p.lost_hours_per_interruption), "source": p.source}
                 for p in self.spot_interruptions]) if self.spot_interruptions else None,
        }


def _non_empty_list(value):
    if not isinstance(value, list) or not value:
        fail("expected a non-empty top-level 'workloads:' list", line=0)
    return value


class WorkloadsFile(ConfigModel):
    """workloads.yaml: the `workloads:` list."""

    unknown_keys: ClassVar[str] = "unknown top-level key(s) {unknown}; allowed: {allowed}"
    not_a_mapping: ClassVar[str] = "expected a non-empty top-level 'workloads:' list"
    workloads: Annotated[list[WorkloadEntry], BeforeValidator(_non_empty_list)] = Field(None, validate_default=True)

    @model_validator(mode="after")
    def _unique_ids(self):
        seen: dict[str, int] = {}
        for entry in self.workloads:
            if entry.id in seen:
                fail(f"workload_id {entry.id!r} already used on line {seen[entry.id]}", line=entry.line)
            seen[entry.id] = entry.line
        return self


def sixteen_bit_or_wider(reference_dir: Path = REFERENCE_DIR) -> set[str]:
    """Precisions of 2 or more bytes per parameter (precisions.csv): never a QLoRA base."""
    return {r["precision"].lower() for r in reference.rows("precisions.csv", reference_dir)
            if Decimal(r["bytes_per_param"]) >= 2}


def qlora_base_problem(precision: str | None, wide_precisions: set[str]) -> str | None:
    """Why a QLoRA request's base precision is wrong, or None (unstated means nf4)."""
    if precision is not None and str(precision).strip().lower() in wide_precisions:
        return (f"QLoRA fine-tunes adapters on a quantised base (4-bit nf4 unless stated): a {precision} base is "
                "16-bit or wider; use mode: lora for a 16-bit base, or a 4-bit precision such as nf4")
    return None


@progress.timed("load")
def load_workloads(file: Path, reference_dir: Path = REFERENCE_DIR) -> pl.DataFrame:
    """Parse and validate workloads.yaml; problems raise ConfigError naming the file, line and key."""
    config = validate(WorkloadsFile, load_yaml_with_lines(file), file,
                      context={"wide_precisions": sixteen_bit_or_wider(reference_dir)})
    rows = [entry.row() for entry in config.workloads]
    schema = {"workload_id": pl.String, "kind": pl.String, "description": pl.String, "unit": pl.String,
              "quantity": QUANTITY, "model_id": pl.String, "precision": pl.String,
              "storage_gb": QUANTITY, "egress_gb": QUANTITY, "setup_hours": QUANTITY,
              "match_workload_id": pl.String, "line": pl.Int64, "utilisation": QUANTITY, **FIT_KEYS,
              "input_tokens": pl.Int64, "output_tokens": pl.Int64, "shape_tolerance_pct": pl.Float64,
              "slo_json": pl.String, "scenario": pl.String, "demand_kind": pl.String,
              "deadline_hours": QUANTITY, "units_per_month": QUANTITY, "period_months": pl.Int64,
              "peak_units_per_hour": QUANTITY, "spot_interruptions_json": pl.String}
    frame = pl.DataFrame(rows, schema=schema)
    try:
        return Workload.validate(frame, lazy=True)
    except pa.errors.SchemaErrors as exc:  # the contract's own checks (allowed kinds, units, > 0, unique ids)
        problems = []
        for case in exc.failure_cases.iter_rows(named=True):
            idx = case["index"]
            line = rows[idx]["line"] if idx is not None else "?"
            problems.append(f"line {line}: {case['column']} {case['failure_case']!r} fails {case['check']}")
        raise ConfigError(f"{file}: " + "; ".join(problems)) from None
