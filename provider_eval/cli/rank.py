"""`provider-eval rank`: configurations per workload, cheapest cost per completed unit first."""
from enum import Enum
from typing import Annotated

import typer

from provider_eval import output
from provider_eval.cli.shared import Format, FormatOpt, WarehouseOpt, cost_column_for, err, fail, query
from provider_eval.exit_codes import ExitCode


RANK_COLUMNS = ["workload_id", "rank", "offer_id", "provider", "vendor", "gpu_model", "gpu_count", "billing_model",
                "cost_per_unit_usd", "total_cost_usd", "hours_billed", "usd_per_gpu_hour", "unit",
                "benchmark_run_ids", "node_count", "throughput_source", "is_interruptible", "source_name",
                "validation_verdict", "cost_per_million_units_usd", "config_id", "also_seen_in",
                "quote_age_days", "risk_flags", "risk_notes", "warnings",
                # Deadlines and sustained demand (docs/workloads.md).
                "demand_kind", "deadline_hours", "hours_needed", "period_months", "busy_hours_per_month",
                "nodes_for_peak", "nodes_rented", "node_utilisation", "cost_per_month_usd",
                "on_demand_usd_per_node_hour", "break_even_utilisation"]

# The rank filters, each a condition on the ranked rows' columns (the flags are computed in SQL:
# workload_costs.risk_flags and its inputs); a null parameter means "no filter".
RANK_FILTERS = """
    ($1 is null or workload_id = $1) and ($2 is null or rank <= $2)
    and ($3 is null or billing_model = $3) and (not $4 or not is_interruptible)
    and ($5 is null or lower(provider) = lower($5)) and ($6 is null or gpu_model = $6)
    and (not $7 or validation_verdict = 'pass')
    and ($8 is null or quote_age_days <= $8)
    and ($9 is null or lower(vendor) = lower($9))"""

# The table's rows: the first $10 per workload, each with how many pass the filters (the rest are
# counted, not fetched: a busy workload ranks thousands of configurations, each with tens of run ids).
TABLE_SELECT = f"""
    select {', '.join(RANK_COLUMNS)}, count(*) over (partition by workload_id) as ranked_in_workload
    from rankings where {RANK_FILTERS}
    qualify row_number() over (partition by workload_id order by rank) <= $10
    order by workload_id, rank"""

# Per workload: how many configurations are excluded, and how many for each reason (most common first).
EXCLUDED_SUMMARY_SQL = """
    with reasons as (
        select workload_id, reason, count(*) as n
        from (select workload_id, unnest(exclusion_reasons) as reason from workload_costs
              where status = 'excluded' and ($1 is null or workload_id = $1))
        group by all
    ),

    listed as (
        select workload_id, list(reason || ' ×' || n order by n desc, reason) as reasons from reasons group by all
    )

    select c.workload_id, count(*) filter (where c.status = 'excluded'), any_value(c.unit),
           coalesce(any_value(l.reasons), [])
    from workload_costs as c left join listed as l using (workload_id)
    where ($1 is null or c.workload_id = $1)
    group by c.workload_id order by c.workload_id"""


class Vendor(str, Enum):
    amd = "amd"
    nvidia = "nvidia"


# The table fits a 100-column terminal: the config id (never wrapped), cost and flags; --wide adds the rest.
RANK_TABLE = ["rank", "config_id", "total_cost_usd", "{cost}", "risk_flags"]
RANK_TABLE_WIDE = ["rank", "config_id", "vendor", "offer_id", "usd_per_gpu_hour", "hours_billed", "total_cost_usd",
                   "{cost}", "source_name", "validation_verdict", "risk_flags"]
# Sustained demand: the monthly bill and the nodes it pays for replace the total (docs/workloads.md);
# --wide adds where monthly/committed capacity beats on-demand.
SUSTAINED_TABLE = ["rank", "config_id", "cost_per_month_usd", "{cost}", "nodes_for_peak", "risk_flags"]
SUSTAINED_TABLE_WIDE = ["rank", "config_id", "vendor", "usd_per_gpu_hour", "nodes_for_peak", "nodes_rented",
                        "busy_hours_per_month", "node_utilisation", "break_even_utilisation", "cost_per_month_usd",
                        "total_cost_usd", "{cost}", "risk_flags"]
# Deadline: the hours needed beside the cost (the node count is in the config id's GPU count).
DEADLINE_TABLE = ["rank", "config_id", "hours_needed", "total_cost_usd", "{cost}", "risk_flags"]
KIND_HEADERS = {"cost_per_month_usd": "$ / month", "nodes_for_peak": "nodes", "nodes_rented": "nodes paid",
                "busy_hours_per_month": "busy h/month", "node_utilisation": "node util.",
                "break_even_utilisation": "beats on-demand above", "hours_needed": "hours needed"}


def _table_columns(kind: str | None, wide: bool) -> list[str]:
    """The table's columns for a workload's demand kind (fixed, deadline, sustained)."""
    if kind == "sustained":
        return SUSTAINED_TABLE_WIDE if wide else SUSTAINED_TABLE
    if kind == "deadline" and not wide:
        return DEADLINE_TABLE
    return RANK_TABLE_WIDE if wide else RANK_TABLE


def _kind_title(record: dict) -> str:
    """What a deadline or sustained workload asks, for its table's title."""
    if record["demand_kind"] == "deadline":
        return f", done within {record['deadline_hours'].normalize():f} h (fewest measured nodes that meet it)"
    if record["demand_kind"] == "sustained":
        return f", sustained for {record['period_months']} month(s)"
    return ""


def _excluded_line(workload_id: str, n_excluded: int, reasons: list[str]) -> str:
    """The excluded summary: a configuration counts once, though it may have several reasons."""
    noun = "configuration" if n_excluded == 1 else "configurations"
    return (f"  {n_excluded} {noun} excluded; reasons (a configuration may have several): {', '.join(reasons)}"
            f" — see: provider-eval explain {workload_id}")


def rank(
    workload: Annotated[str | None, typer.Option(help="Only this workload id.")] = None,
    top: Annotated[int | None, typer.Option(help="Show at most this many per workload.")] = None,
    estimates: Annotated[bool, typer.Option(
        "--estimates", help="Also list configurations with estimated (not measured) throughput, ranked apart.")] = False,
    billing: Annotated[str | None, typer.Option(
        help="Only this billing model: on_demand, spot, monthly, dedicated, reserved, …")] = None,
    no_spot: Annotated[bool, typer.Option("--no-spot", help="Leave out spot / interruptible offers.")] = False,
    provider: Annotated[str | None, typer.Option(help="Only this provider.")] = None,
    gpu: Annotated[str | None, typer.Option(help="Only this GPU model (catalog name or alias), e.g. MI300X.")] = None,
    vendor: Annotated[Vendor | None, typer.Option(help="Only this GPU vendor: amd or nvidia.")] = None,
    validated_only: Annotated[bool, typer.Option(
        "--validated-only", help="Only offers whose latest host validation passed (validate-host).")] = False,
    max_quote_age: Annotated[int | None, typer.Option(
        "--max-quote-age", min=0, metavar="DAYS", help="Only quotes observed at most DAYS days before the refresh "
        "(an undated quote's age is unknown: left out).")] = None,
    wide: Annotated[bool, typer.Option("--wide", help="Table: also offer, vendor, $/GPU-h, hours, source, validation.")] = False,
    warehouse_path: WarehouseOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Configurations per workload, cheapest cost per completed unit first, with their risk flags."""
    gpu_model = gpu
    if gpu is not None:
        from provider_eval import feasibility

        gpu_model = feasibility.load_catalog().resolve_gpu(gpu)
        if gpu_model is None:
            fail(f"unknown GPU {gpu!r}; known: {', '.join(feasibility.load_catalog().gpu_models)}", ExitCode.USAGE)
    select = f"select {', '.join(RANK_COLUMNS)} from {{}} where {RANK_FILTERS} order by workload_id, rank"
    params = [workload, top, billing, no_spot, provider, gpu_model, validated_only, max_quote_age,
              vendor.value if vendor else None]
    # Without --top, a table shows the cheapest TABLE_ROWS_SHOWN per workload and says how to see the rest.
    limit = top or output.TABLE_ROWS_SHOWN
    if fmt == Format.table:
        cols, rows = query(warehouse_path, TABLE_SELECT, params + [limit])
    else:
        cols, rows = query(warehouse_path, select.format("rankings"), params)
    guessed = query(warehouse_path, select.format("estimate_rankings"), params)[1] if estimates else []
    if fmt != Format.table:
        # Measured first; each row says where its throughput came from (throughput_source).
        output.render(cols, rows + guessed, fmt.value)
        return
    _, excluded = query(warehouse_path, EXCLUDED_SUMMARY_SQL, [workload])
    if not excluded:
        fail(f"no workload {workload!r} in the warehouse" if workload else "the warehouse has no workloads",
              ExitCode.USAGE if workload else ExitCode.FAILED)
    filtered = any(p is not None and p is not False for p in params[2:])  # --max-quote-age 0 filters too
    for workload_id, n_excluded, unit, reasons in excluded:
        cost_column, headers = cost_column_for(unit)
        headers = {**headers, **KIND_HEADERS, "risk_flags": "flags", "validation_verdict": "validation"}
        records = [dict(zip(cols, r)) for r in rows + guessed if r[0] == workload_id]
        kind = records[0]["demand_kind"] if records else None
        shown = [cost_column if c == "{cost}" else c for c in _table_columns(kind, wide)]
        idx = [cols.index(c) for c in shown]
        per = f"per million {unit}" if cost_column == "cost_per_million_units_usd" else f"per completed unit ({unit})"
        per += _kind_title(records[0]) if records else ""
        mine = [r for r in rows if r[0] == workload_id]
        if mine:
            ranked = mine[0][cols.index("ranked_in_workload")]
            output.render(shown, [tuple(r[i] for i in idx) for r in mine], "table",
                          title=f"{workload_id}: cost {per}", headers=headers, no_wrap={"config_id"})
            if ranked > limit:
                err.print(f"  … {ranked - limit:,} more ranked configuration(s) not shown — see all with "
                          f"--top {ranked} or --format csv|json", highlight=False)
        elif filtered:
            print(f"{workload_id}: no ranked configuration passes the filters")
        else:
            print(f"{workload_id}: no configuration ranked (none has a matching measured benchmark and passes "
                  "every check; the reasons follow)")
        guesses = [tuple(r[i] for i in idx) for r in guessed if r[0] == workload_id]
        if guesses:
            output.render(shown, guesses, "table", headers=headers, no_wrap={"config_id"},
                          title=f"{workload_id}: lower-confidence ESTIMATES (throughput not measured; ranked apart)")
        if n_excluded:
            print(_excluded_line(workload_id, n_excluded, reasons))
    if filtered:
        print("  filtered: ranks are each configuration's rank among all ranked ones (rankings.rank)")
