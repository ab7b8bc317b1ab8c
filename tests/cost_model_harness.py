"""Run the cost-model SQL files on tiny input tables in an in-memory DuckDB (no refresh needed)."""
from decimal import Decimal

import duckdb

from provider_eval.paths import REFERENCE_DIR, SQL_DIR

# The cost model's own models, in build order.
MODELS = ["intermediate/int_workload_configurations", "intermediate/int_workload_cost_lines",
          "marts/workload_costs", "intermediate/int_cost_ranks", "marts/rankings", "marts/estimate_rankings", "marts/ranking_sensitivity"]

INPUTS = {
    "stg_workloads": {
        "workload_id": "varchar", "kind": "varchar", "unit": "varchar", "quantity": "decimal(38, 6)",
        "storage_gb": "decimal(38, 6)", "egress_gb": "decimal(38, 6)", "setup_hours": "decimal(38, 6)",
        "utilisation": "decimal(38, 6)", "engine": "varchar", "model_id": "varchar", "precision": "varchar",
        "benchmark_workload_id": "varchar", "input_tokens": "bigint", "output_tokens": "bigint",
        "shape_tolerance_pct": "double", "slo_json": "varchar", "scenario": "varchar",
    },
    "offers": {
        "offer_id": "varchar", "provider": "varchar", "gpu_model": "varchar", "gpus_per_node": "integer",
        "billing_model": "varchar", "tier": "varchar", "commitment_term_hours": "decimal(18, 6)",
        "usd_per_gpu_hour": "decimal(18, 6)", "usd_per_node_hour": "decimal(18, 6)",
        "price_amount": "decimal(38, 6)", "currency": "varchar", "price_unit": "varchar", "price_scope": "varchar",
        "billing_granularity": "varchar", "billing_granularity_s": "integer", "min_term_hours": "decimal(18, 6)",
        "storage_usd_per_gb_month": "decimal(18, 6)", "egress_usd_per_gb": "decimal(18, 6)",
        "licence_usd_per_hour": "decimal(18, 6)", "setup_fee_usd": "decimal(18, 6)",
        "support_usd_per_month": "decimal(18, 6)", "observed_at": "timestamptz", "is_stale": "boolean",
        "stale_reason": "varchar", "scope_reason": "varchar", "price_band_reason": "varchar", "source_name": "varchar", "rocm_version": "varchar",
        "os": "varchar", "kernel": "varchar", "amdgpu_driver_version": "varchar", "fx_rate_date": "date",
        "warnings": "varchar[]", "scope_detail": "varchar", "observed_at_basis": "varchar",
        "price_band_reason": "varchar", "vendor": "varchar",
    },
    "int_workload_throughput": {
        "workload_id": "varchar", "run_provider": "varchar", "gpu_model": "varchar", "gpu_count": "integer",
        "units_per_hour": "double", "benchmark_runs": "bigint", "benchmark_run_ids": "varchar[]",
        "node_count": "integer", "slo_failed_run_ids": "varchar[]", "mismatch_detail": "varchar",
        "perf_implausible_run_ids": "varchar[]",
    },
    "memory_fit": {
        "workload_id": "varchar", "gpu_model": "varchar", "gpu_count": "integer", "fits": "boolean",
        "precision_supported": "boolean", "min_gpus": "integer",
    },
    "compat_checks": {
        "gpu_model": "varchar", "rocm_version": "varchar", "os": "varchar", "kernel": "varchar",
        "amdgpu_driver_version": "varchar", "torch_version": "varchar", "engine": "varchar",
        "verdict": "varchar", "reasons": "varchar[]",
    },
    "hardware_validations": {
        "offer_id": "varchar", "validation_id": "varchar", "verdict": "varchar", "is_latest_for_offer": "boolean",
    },
}

# The benchmark_runs columns benchmark matching reads (stg_benchmark_runs), for build(bench_runs=...).
LATENCY_COLUMNS = [f"{m}_{s}_ms" for m in ("ttft", "tpot", "itl", "e2el") for s in ("mean", "median", "p90", "p95", "p99")]
BENCH_RUNS = {
    "run_id": "varchar", "provider": "varchar", "gpu_model": "varchar", "gpu_count": "integer", "node_count": "integer",
    "model_id": "varchar", "precision": "varchar", "engine": "varchar", "workload_id": "varchar", "unit": "varchar",
    "result_valid": "boolean", "completed": "double", "duration_s": "double", "units_per_hour": "double",
    "request_throughput_per_s": "double", "output_tokens_per_s": "double", "total_tokens_per_s": "double",
    "mean_input_tokens": "double", "mean_output_tokens": "double", "input_len_tokens": "bigint",
    "output_len_tokens": "bigint", "source_name": "varchar", "file_sha256": "varchar", "scenario": "varchar",
    "perf_confirmed": "boolean",
    **{c: "double" for c in LATENCY_COLUMNS},
}
MATCHING_MODELS = ["intermediate/int_benchmark_plausibility", "intermediate/int_benchmark_throughputs", "intermediate/int_workload_benchmark_matches",
                   "intermediate/int_workload_throughput"]

GRANULARITY_S = {"second": 1, "minute": 60, "hour": 3600, "month": 730 * 3600}
HOURS_PER_UNIT = {"second": Decimal(1) / 3600, "minute": Decimal(1) / 60, "hour": Decimal(1), "month": Decimal(730)}


def workload(workload_id="w", quantity=1, unit="jobs", kind="batch_job", **extra) -> dict:
    """A stg_workloads row with the defaults of workloads.yaml."""
    return {"workload_id": workload_id, "kind": kind, "unit": unit, "quantity": Decimal(str(quantity)),
            "storage_gb": 0, "egress_gb": 0, "setup_hours": 0, "utilisation": 1,
            "benchmark_workload_id": workload_id, "shape_tolerance_pct": 10.0, **extra}


def bench_run(run_id, gpu_model="MI300X", gpu_count=1, output_tokens_per_s=1000.0, **extra) -> dict:
    """A stg_benchmark_runs row measuring output tokens (its rates whole-system per second)."""
    return {"run_id": run_id, "gpu_model": gpu_model, "gpu_count": gpu_count, "unit": "requests",
            "output_tokens_per_s": output_tokens_per_s, "source_name": "b", "file_sha256": "f", **extra}


def offer(offer_id, gpu_model="MI300X", price=Decimal("2"), gpus_per_node=1, price_scope="per_node",
          price_unit="hour", billing_model="on_demand", billing_granularity="hour", provider="p", **extra) -> dict:
    """An offers row in USD, normalised the way stg_quote_observations does it."""
    price = Decimal(str(price))
    per_hour = price / HOURS_PER_UNIT[price_unit]
    node = per_hour if price_scope == "per_node" else per_hour * gpus_per_node
    row = {"offer_id": offer_id, "provider": provider, "gpu_model": gpu_model, "gpus_per_node": gpus_per_node,
           "billing_model": billing_model, "usd_per_node_hour": round(node, 6),
           "usd_per_gpu_hour": round(node / gpus_per_node, 6), "price_amount": price, "currency": "USD",
           "price_unit": price_unit, "price_scope": price_scope, "billing_granularity": billing_granularity,
           "billing_granularity_s": GRANULARITY_S[billing_granularity], "min_term_hours": 0,
           "storage_usd_per_gb_month": 0, "egress_usd_per_gb": 0, "licence_usd_per_hour": 0, "setup_fee_usd": 0,
           "support_usd_per_month": 0, "observed_at": "2026-11-01 00:00:00+00", "observed_at_basis": "row", "is_stale": False,
           "source_name": "s", "fx_rate_date": "1970-01-01", "vendor": _vendor(gpu_model)}
    row.update(extra)
    return row


def _vendor(gpu_model: str) -> str | None:
    """The catalog's vendor of a GPU model (offers.vendor), as the offers mart joins it."""
    import csv

    with open(REFERENCE_DIR / "gpus.csv", encoding="utf-8") as f:
        return next((r["vendor"] for r in csv.DictReader(f) if r["model"] == gpu_model), None)


def run(workload_id="w", gpu_model="MI300X", units_per_hour=1.0, gpu_count=1, run_provider=None, run_id=None) -> dict:
    """An int_workload_throughput row (median throughput of matching runs)."""
    return {"workload_id": workload_id, "run_provider": run_provider, "gpu_model": gpu_model, "gpu_count": gpu_count,
            "units_per_hour": units_per_hour, "benchmark_runs": 1,
            "benchmark_run_ids": [run_id or f"run-{gpu_model}-{gpu_count}"]}


def build(workloads=(), offers=(), runs=(), memory=(), compat=(), validations=(),
          bench_runs=None) -> duckdb.DuckDBPyConnection:
    """An in-memory warehouse holding these inputs plus the cost model built over them.

    With bench_runs (stg_benchmark_runs rows), throughput comes from the real matching models instead of `runs`."""
    con = duckdb.connect()
    con.execute(f"create table ref_gpus as select * from read_csv('{REFERENCE_DIR / 'gpus.csv'}', all_varchar=true)")
    con.execute("alter table ref_gpus alter memory_bandwidth_tbps type double")
    con.execute(f"create table ref_fx_rates as select * from read_csv('{REFERENCE_DIR / 'fx_rates.csv'}')")
    # When the refresh runs (quote ages are counted to it): two weeks after the offers' observed_at.
    con.execute("create table raw_refresh as select timestamptz '2026-11-15 00:00:00+00' as refreshed_at")
    for name in ("llm_models", "published_throughput_ceilings", "plausibility_limits"):  # PERF_IMPLAUSIBLE
        con.execute(f"create table ref_{name} as select * from read_csv('{REFERENCE_DIR / (name + '.csv')}', header = true)")
    inputs = [("stg_workloads", workloads), ("offers", offers), ("memory_fit", memory), ("compat_checks", compat),
              ("hardware_validations", validations)]
    inputs.append(("stg_benchmark_runs", bench_runs) if bench_runs is not None else ("int_workload_throughput", runs))
    for table, rows in inputs:
        columns = {**INPUTS, "stg_benchmark_runs": BENCH_RUNS}[table]
        con.execute(f"create table {table} ({', '.join(f'{c} {t}' for c, t in columns.items())})")
        for row in rows:
            unknown = set(row) - set(columns)
            assert not unknown, f"{table}: unknown test columns {unknown}"
            con.execute(f"insert into {table} by name select {', '.join(f'$v{i} as {c}' for i, c in enumerate(row))}",
                        {f"v{i}": v for i, v in enumerate(row.values())})
    for model in (MATCHING_MODELS if bench_runs is not None else []) + MODELS:
        body = (SQL_DIR / f"{model}.sql").read_text().strip().rstrip(";")
        con.execute(f'create table "{model.split("/")[1]}" as\n{body}')
    return con


def rows(con, sql, params=None) -> list[dict]:
    """Query results as dicts."""
    cur = con.execute(sql, params or [])
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]
