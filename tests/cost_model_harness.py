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
        "utilisation": "decimal(38, 6)", "engine": "varchar",
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
        "stale_reason": "varchar", "scope_reason": "varchar", "source_name": "varchar", "rocm_version": "varchar",
        "os": "varchar", "kernel": "varchar", "amdgpu_driver_version": "varchar", "fx_rate_date": "date",
        "pending_reason": "varchar",
    },
    "int_workload_throughput": {
        "workload_id": "varchar", "run_provider": "varchar", "gpu_model": "varchar", "gpu_count": "integer",
        "units_per_hour": "double", "benchmark_runs": "bigint", "benchmark_run_ids": "varchar[]",
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

GRANULARITY_S = {"second": 1, "minute": 60, "hour": 3600, "month": 730 * 3600}
HOURS_PER_UNIT = {"second": Decimal(1) / 3600, "minute": Decimal(1) / 60, "hour": Decimal(1), "month": Decimal(730)}


def workload(workload_id="w", quantity=1, unit="jobs", kind="batch_job", **extra) -> dict:
    """A stg_workloads row with the defaults of workloads.yaml."""
    return {"workload_id": workload_id, "kind": kind, "unit": unit, "quantity": Decimal(str(quantity)),
            "storage_gb": 0, "egress_gb": 0, "setup_hours": 0, "utilisation": 1, **extra}


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
           "support_usd_per_month": 0, "observed_at": "2026-11-01 00:00:00+00", "is_stale": False,
           "source_name": "s", "fx_rate_date": "1970-01-01"}
    row.update(extra)
    return row


def run(workload_id="w", gpu_model="MI300X", units_per_hour=1.0, gpu_count=1, run_provider=None, run_id=None) -> dict:
    """An int_workload_throughput row (median throughput of matching runs)."""
    return {"workload_id": workload_id, "run_provider": run_provider, "gpu_model": gpu_model, "gpu_count": gpu_count,
            "units_per_hour": units_per_hour, "benchmark_runs": 1,
            "benchmark_run_ids": [run_id or f"run-{gpu_model}-{gpu_count}"]}


def build(workloads=(), offers=(), runs=(), memory=(), compat=(), validations=()) -> duckdb.DuckDBPyConnection:
    """An in-memory warehouse holding these inputs plus the cost model built over them."""
    con = duckdb.connect()
    con.execute(f"create table ref_gpus as select * from read_csv('{REFERENCE_DIR / 'gpus.csv'}', all_varchar=true)")
    con.execute("alter table ref_gpus alter memory_bandwidth_tbps type double")
    con.execute(f"create table ref_fx_rates as select * from read_csv('{REFERENCE_DIR / 'fx_rates.csv'}')")
    for table, rows in [("stg_workloads", workloads), ("offers", offers), ("int_workload_throughput", runs),
                        ("memory_fit", memory), ("compat_checks", compat), ("hardware_validations", validations)]:
        columns = INPUTS[table]
        con.execute(f"create table {table} ({', '.join(f'{c} {t}' for c, t in columns.items())})")
        for row in rows:
            unknown = set(row) - set(columns)
            assert not unknown, f"{table}: unknown test columns {unknown}"
            con.execute(f"insert into {table} by name select {', '.join(f'$v{i} as {c}' for i, c in enumerate(row))}",
                        {f"v{i}": v for i, v in enumerate(row.values())})
    for model in MODELS:
        body = (SQL_DIR / f"{model}.sql").read_text().strip().rstrip(";")
        con.execute(f'create table "{model.split("/")[1]}" as\n{body}')
    return con


def rows(con, sql, params=None) -> list[dict]:
    """Query results as dicts."""
    cur = con.execute(sql, params or [])
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]
