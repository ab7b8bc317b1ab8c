"""`provider-eval explain`: every configuration of a workload, its cost lines or why it is excluded."""
from pathlib import Path
from typing import Annotated

import typer

from provider_eval import output
from provider_eval.cli.shared import (HEADERS, PER_MILLION_UNITS, Format, FormatOpt, WarehouseOpt, cost_column_for,
                                      fail, query)
from provider_eval.exit_codes import ExitCode


EXPLAIN_COLUMNS = ["offer_id", "provider", "gpu_model", "gpu_count", "billing_model", "status",
                   "exclusion_reasons", "usd_per_node_hour", "units_per_hour", "hours_needed", "hours_billed",
                   "compute_cost_usd", "storage_cost_usd", "egress_cost_usd", "licence_cost_usd",
                   "setup_cost_usd", "support_cost_usd", "total_cost_usd", "cost_per_unit_usd",
                   "benchmark_run_ids", "throughput_source", "estimate_basis", "node_count", "gpus_per_node",
                   "utilisation", "busy_hours", "billing_period", "billing_periods", "usd_per_node_month",
                   "cost_per_million_units_usd", "is_interruptible", "risk_notes", "tier", "commitment_term_hours",
                   "source_name", "unit", "quantity", "config_id", "observed_at", "benchmark_node_count",
                   "benchmark_match_detail", "also_seen_in",
                   # Deadlines and sustained demand (docs/workloads.md).
                   "demand_kind", "deadline_hours", "period_months", "busy_hours_per_month", "nodes_for_peak",
                   "nodes_rented", "node_utilisation", "cost_per_month_usd", "on_demand_usd_per_node_hour",
                   "break_even_utilisation", "warnings"]

SENSITIVITY_COLUMNS = ["rank", "provider", "offer_id", "gpu_model", "gpu_count", "billing_model", "usd_per_gpu_hour",
                       "total_cost_usd", "compared_with_offer_id", "break_even_usd_per_gpu_hour",
                       "break_even_usd_per_node_hour", "break_even_change_pct", "rank_at_30pct", "rank_at_60pct",
                       "rank_at_100pct", "break_even_usd_per_node_month", "break_even_utilisation"]
SENSITIVITY_HEADERS = {**HEADERS, "compared_with_offer_id": "vs", "break_even_usd_per_gpu_hour": "break-even $/GPU-h",
                       "break_even_usd_per_node_hour": "break-even $/node-h", "break_even_change_pct": "price change %",
                       "rank_at_30pct": "rank @30%", "rank_at_60pct": "rank @60%", "rank_at_100pct": "rank @100%",
                       "break_even_usd_per_node_month": "break-even $/node-month (monthly)",
                       "break_even_utilisation": "beats on-demand above util."}


def _throughput_label(source: str | None, run_ids: list | None) -> str:
    """What the throughput rests on: 'measured' only where a matching run counts (never for NO_BENCHMARK)."""
    if source == "measured" and not run_ids:
        return "no measurement"
    return source or "no measurement"


def _arithmetic(row: dict) -> list[str]:
    """The cost of one configuration as the sums that produce it, for people checking it by hand."""
    if row["total_cost_usd"] is None:
        return [f"not costed: {', '.join(row['exclusion_reasons'])}"]
    out = [f"throughput ({row['throughput_source']}): {row['units_per_hour']:,.6g} {row['unit']}/h"
           + (f" — {row['estimate_basis']}" if row["estimate_basis"] else ""),
           f"hours needed = {row['quantity'].normalize():f} / ({row['units_per_hour']:,.6g} × utilisation "
           f"{row['utilisation'].normalize():f}) + setup = {row['hours_needed'].normalize():f} h",
           f"hours billed = {row['billing_periods']} {row['billing_period']}(s) → {row['hours_billed'].normalize():f} h"]
    if row["billing_period"] == "month" and row["usd_per_node_month"] is not None:
        out.append(f"compute = {row['billing_periods']} month(s) × {row['node_count']} node(s) × "
                   f"${row['usd_per_node_month'].normalize():f}/node-month = ${row['compute_cost_usd']:,.2f}")
    else:
        out.append(f"compute = {row['hours_billed'].normalize():f} h × {row['node_count']} node(s) × "
                   f"${row['usd_per_node_hour'].normalize():f}/node-h = ${row['compute_cost_usd']:,.2f}")
    lines = ["compute", "storage", "egress", "licence", "setup", "support"]
    out.append(" + ".join(f"{name} ${row[name + '_cost_usd']:,.2f}" for name in lines)
               + f" = total ${row['total_cost_usd']:,.2f}")
    out.append(f"cost per completed unit = ${row['total_cost_usd']:,.2f} / {row['quantity'].normalize():f} "
               f"{row['unit']} = ${row['cost_per_unit_usd'].normalize():f}")
    if row["unit"] in PER_MILLION_UNITS:
        out.append(f"cost per million {row['unit']} = ${row['total_cost_usd']:,.2f} × 1,000,000 / "
                   f"{row['quantity'].normalize():f} = ${row['cost_per_million_units_usd']:,.4f}")
    return out + _demand_lines(row) + list(row["risk_notes"] or [])


def _demand_lines(row: dict) -> list[str]:
    """What a deadline or sustained workload adds to the arithmetic."""
    out = []
    if row["demand_kind"] == "deadline":
        met = "≤" if "DEADLINE_NOT_MET" not in (row["exclusion_reasons"] or []) else ">"
        out.append(f"deadline: {row['hours_needed'].normalize():f} h needed {met} {row['deadline_hours'].normalize():f} h "
                   f"on {row['node_count']} node(s) (the fewest measured node count that meets it)")
    if row["demand_kind"] == "sustained":
        months = row["period_months"]
        out.append(f"sustained: {(row['quantity'] / months).normalize():f} {row['unit']}/month × {months} month(s); "
                   f"busy {row['busy_hours_per_month'].normalize():f} h/month per copy; the peak needs "
                   f"{row['nodes_for_peak']} node(s)")
        if row["nodes_rented"] is not None:
            out.append(f"always-on: {row['nodes_rented']} node(s) paid for the whole period, "
                       f"{row['node_utilisation'] * 100:.2f} % of their hours busy")
        else:
            out.append("billed for busy hours only (on-demand capacity assumed available at the peak)")
        out.append(f"cost per month = ${row['total_cost_usd']:,.2f} / {months} = ${row['cost_per_month_usd']:,.2f}")
    if row["break_even_utilisation"] is not None:
        out.append(f"beats the provider's on-demand ${row['on_demand_usd_per_node_hour'].normalize():f}/node-h above "
                   f"{row['break_even_utilisation'] * 100:.2f} % utilisation")
    return out


def _sources(row: dict, runs: list[tuple]) -> list[str]:
    """Where each input of one configuration's cost comes from."""
    from datetime import timezone

    observed = row["observed_at"].astimezone(timezone.utc)  # DuckDB hands back the session's time zone
    out = [f"price: {row['offer_id']} ({row['billing_model']}) from source {row['source_name']}, observed "
           f"{observed:%Y-%m-%d %H:%M} UTC" + (f"; also seen in {', '.join(row['also_seen_in'])}"
                                                        if row["also_seen_in"] else "")]
    for run_id, source_name, source_file, fmt, scenario in runs:
        out.append(f"throughput: run {run_id} ({fmt}{', ' + scenario if scenario else ''}) from source "
                   f"{source_name}, file {source_file}")
    if row["benchmark_match_detail"]:
        out.append(f"runs that came close but do not count: {row['benchmark_match_detail']}")
    out.append(f"workload: {row['quantity'].normalize():f} {row['unit']}, utilisation "
               f"{row['utilisation'].normalize():f} (workloads.yaml)")
    return out


def explain(
    workload: Annotated[str, typer.Argument(help="Workload id.")],
    config: Annotated[str | None, typer.Argument(help="One configuration: its config id as `rank` prints it "
                                                "(provider/gpu_model/gpu_count/billing_model) or an offer id.")] = None,
    offer: Annotated[str | None, typer.Option(help="Only this offer id.")] = None,
    warehouse_path: WarehouseOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Every configuration for a workload: cost lines, or why it is excluded."""
    if config and offer and config != offer:
        fail("give the configuration either as CONFIG or as --offer, not both", ExitCode.USAGE)
    chosen = config or offer
    cols, rows = query(
        warehouse_path,
        f"select {', '.join(EXPLAIN_COLUMNS)} from workload_costs "
        "where workload_id = $1 and ($2 is null or offer_id = $2 or config_id = $2) "
        "order by status desc, cost_per_unit_usd nulls last, provider, offer_id, billing_model",
        [workload, chosen],
    )
    if not rows:
        fail(f"no costs for workload {workload!r}" + (f" and configuration {chosen!r} (a config id from "
                                                        f"`provider-eval rank`, or an offer id)" if chosen else ""),
              ExitCode.USAGE)
    # A configuration without a matching run was not measured, whatever the format says it.
    source_at, runs_at = cols.index("throughput_source"), cols.index("benchmark_run_ids")
    rows = [(*r[:source_at], _throughput_label(r[source_at], r[runs_at]), *r[source_at + 1:]) for r in rows]
    if fmt != Format.table:
        output.render(cols, rows, fmt.value)
    elif chosen:
        for row in rows:
            record = dict(zip(cols, row))
            # A per-million figure means something for tokens only ($16M per million jobs does not).
            keep = [i for i, c in enumerate(cols)
                    if c != "cost_per_million_units_usd" or record["unit"] in PER_MILLION_UNITS]
            output.render_record([cols[i] for i in keep], [row[i] for i in keep], title=f"{workload} on "
                                 f"{record['config_id']} (offer {record['offer_id']}, {record['throughput_source']}): "
                                 "every cost line")
            for line in _arithmetic(record):
                print(f"  {line}")
            runs = query(warehouse_path, "select run_id, source_name, source_file, benchmark_format, scenario "
                          "from benchmark_runs where list_contains($1, run_id) order by run_id",
                          [record["benchmark_run_ids"] or []])[1]
            print("  sources:")
            for line in _sources(record, runs):
                print(f"    {line}")
        if any("NO_BENCHMARK" in (dict(zip(cols, r))["exclusion_reasons"] or []) for r in rows):
            _print_closest_runs(warehouse_path, workload)
    else:
        cost_column, headers = cost_column_for(rows[0][cols.index("unit")])
        shown = ["config_id", "offer_id", "status", "throughput_source", "exclusion_reasons",
                 "usd_per_node_hour", "hours_billed", "total_cost_usd", cost_column]
        idx = [cols.index(c) for c in shown]
        output.render(shown, [tuple(r[i] for i in idx) for r in rows], "table",
                      title=f"{workload}: every configuration (cost lines: explain {workload} CONFIG)",
                      headers=headers)
        if any("NO_BENCHMARK" in (r[cols.index("exclusion_reasons")] or []) for r in rows):
            _print_closest_runs(warehouse_path, workload)
        sens_cols, sens = query(warehouse_path, f"select {', '.join(SENSITIVITY_COLUMNS)} from ranking_sensitivity "
                                 "where workload_id = $1 order by rank", [workload])
        if sens:
            output.render(sens_cols, sens, "table", headers=SENSITIVITY_HEADERS,
                          title=f"{workload}: sensitivity — break-even price to overtake the leader (the leader: to "
                                "lose the lead), and the rank at 30 / 60 / 100 % utilisation")


def _print_closest_runs(warehouse_path: Path, workload: str) -> None:
    """The benchmark runs nearest the workload and what each does not match (the closest_runs mart)."""
    cols, runs = query(warehouse_path, "select closeness_rank, run_id, gpu_model, gpu_count, model_id, precision, "
                        "engine, mismatches from closest_runs where workload_id = $1 order by closeness_rank",
                        [workload])
    if not runs:
        print("  NO_BENCHMARK: no benchmark run is loaded at all; add one (docs/formats/benchmarks.md)")
        return
    shown = [(*r[:-1], "; ".join(r[-1]) or "matches (see the configurations above)") for r in runs]
    output.render(cols[:-1] + ["what does not match"], shown, "table",
                  title=f"{workload}: NO_BENCHMARK — the closest benchmark runs and what does not match")
