"""The AMD vs NVIDIA baseline: per workload, the cheapest measured configuration of each vendor."""
import html

import duckdb

from provider_eval.report.cells import _frame, _table

# AMD against the NVIDIA baseline for one workload (docs/cost-model.md "NVIDIA offers: the baseline"):
# per vendor, its ranked (measured) configurations, the cheapest, how many were excluded (listed with
# their reasons under Excluded configurations) and the software its measured run states (engine, ROCm
# or CUDA and driver: benchmark_runs, never inferred from the vendor).
VENDOR_BASELINE_SQL = """
    with costs as (
        select * from workload_costs where workload_id = $1 and vendor is not null and throughput_source = 'measured'
    ),

    ranked as (
        select vendor, count(*) as ranked, arg_min(config_id, cost_per_unit_usd) as cheapest,
               min({cost})::double as cheapest_cost, arg_min(benchmark_run_ids[1], cost_per_unit_usd) as run_id
        from rankings where workload_id = $1 and vendor is not null group by vendor
    ),

    excluded as (
        select vendor, count(*) filter (where status = 'excluded') as excluded from costs group by vendor
    )

    select e.vendor, coalesce(r.ranked, 0) as "ranked (measured)", r.cheapest as "cheapest configuration",
           r.cheapest_cost as "{label}", e.excluded as "excluded (reasons: Excluded configurations)",
           nullif(concat_ws(', ', b.engine || ' ' || coalesce(b.engine_version, ''), 'ROCm ' || b.rocm_version,
                            'CUDA ' || b.cuda_version, 'driver ' || b.gpu_driver_version), '')
               as "software (its measured run states)"
    from excluded as e left join ranked as r using (vendor)
    left join {runs} as b on b.run_id = r.run_id
    order by e.vendor"""
# A warehouse built from part of the models (the SQL-chain tests) has no benchmark_runs: no software column then.
NO_RUNS = "(select null::varchar as run_id, null::varchar as engine, null::varchar as engine_version, " \
          "null::varchar as rocm_version, null::varchar as cuda_version, null::varchar as gpu_driver_version)"


def _vendor_baseline(con: duckdb.DuckDBPyConnection, workload_id: str, cost: str, label: str) -> str:
    """AMD vs NVIDIA baseline for one workload: only what the warehouse ranks, and why the rest is out."""
    has_runs = con.execute("select count(*) from information_schema.tables where table_name = 'benchmark_runs'").fetchone()[0]
    frame = _frame(con, VENDOR_BASELINE_SQL.format(cost=cost, label=label, runs="benchmark_runs" if has_runs else NO_RUNS),
                   [workload_id])
    parts = [f"<h4>AMD vs NVIDIA baseline ({html.escape(workload_id)})</h4>"]
    ranked = frame[frame["ranked (measured)"] > 0] if not frame.empty else frame
    vendors = set(ranked["vendor"]) if not frame.empty else set()
    if {"AMD", "NVIDIA"} <= vendors:
        amd = ranked.loc[ranked["vendor"] == "AMD", label].iloc[0]
        nvidia = ranked.loc[ranked["vendor"] == "NVIDIA", label].iloc[0]
        parts.append(f'<p class="vendor-verdict">The cheapest AMD configuration costs {amd / nvidia:.2f} × the '
                     f"cheapest NVIDIA one ({label}: {amd:,.4f} against {nvidia:,.4f}), both measured.</p>")
    else:
        missing = sorted({"AMD", "NVIDIA"} - vendors)
        parts.append(f'<p class="empty vendor-missing">No comparison: this warehouse ranks no measured '
                     f"{' or '.join(missing)} configuration for this workload (Excluded configurations below say why).</p>")
    parts.append(_table(frame, "No AMD or NVIDIA offer is costed for this workload."))
    return "\n".join(parts)


def _vendor_summary(con: duckdb.DuckDBPyConnection) -> str:
    """Which workloads have ranked measured configurations of both vendors (the baseline comparisons)."""
    both = [r[0] for r in con.execute(
        "select workload_id from rankings where vendor in ('AMD', 'NVIDIA') group by workload_id "
        "having count(distinct vendor) = 2 order by workload_id").fetchall()]
    if not both:
        return ('<p class="empty" id="vendor-none">No workload in this warehouse has ranked (measured) configurations '
                "of both AMD and NVIDIA GPUs, so there is no AMD vs NVIDIA baseline yet; each workload's section "
                "lists, per vendor, what was costed and why it was excluded.</p>")
    links = ", ".join(f'<a href="#w-{html.escape(w)}">{html.escape(w)}</a>' for w in both)
    return f'<p id="vendor-both">AMD and NVIDIA both ranked (measured) for: {links}.</p>'
