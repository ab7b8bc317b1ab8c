"""The report's sections: one per workload (ranking, cost vs time, estimates, exclusions), memory fit, prices."""
import html

import duckdb
import pandas as pd

from provider_eval import charts
from provider_eval.report.baseline import _vendor_baseline
from provider_eval.report.cells import _figure, _frame, _table
from provider_eval.report.labels import chart_labels
from provider_eval.report.queries import (COST_VS_TIME_SQL, ESTIMATES_SQL, EXCLUDED_SQL, MEMORY_FIT_SQL,
                                          PER_MILLION_UNITS, PRICE_HISTORY_SQL, RANKED_SQL, SENSITIVITY_SQL)


def _workload_section(con: duckdb.DuckDBPyConnection, workload_id: str, unit: str) -> str:
    wid = html.escape(workload_id)
    parts = [f'<h3 id="w-{wid}">{wid}</h3>']
    per_million = unit in PER_MILLION_UNITS
    per = f"per million {unit}" if per_million else f"per completed {unit}"
    ranked = _frame(con, RANKED_SQL, [workload_id])
    if ranked.empty:
        parts.append('<p class="empty">No configuration can be ranked for this workload yet (see the exclusions).</p>')
    else:
        parts.append(_figure(charts.to_svg(charts.cost_bars(ranked, unit, per_million)),
                             f"Cost {per} (measured throughput), rank 1 (cheapest) on top."))
        points = _frame(con, COST_VS_TIME_SQL, [workload_id])
        if points.empty:
            parts.append('<p class="empty">No latency or duration data for the ranked configurations yet.</p>')
        else:
            is_latency = bool(points["is_latency"].iloc[0])
            x_title = "median request latency (ms)" if is_latency else f"hours to complete the workload"
            if not is_latency:
                parts.append('<p class="note">No per-request latency data yet (benchmark_requests has none for '
                             'these runs): time is the hours each configuration needs for the whole workload.</p>')
            column = "cost_per_million_units_usd" if per_million else "cost_per_unit_usd"
            points["label"], left_out = chart_labels(points, column)
            hidden = (f" {left_out} label(s) that would overlap another are left out: the ranking above lists "
                      "every configuration." if left_out else "")
            parts.append(_figure(charts.to_svg(charts.cost_vs_time(points, unit, x_title, per_million)),
                                 "Cost against time; the dashed line joins the Pareto front "
                                 "(no other configuration is both cheaper and faster)." + hidden))
        parts.append(f"<h4>Sensitivity ({html.escape(workload_id)})</h4>")
        parts.append('<p class="note">The price at which each configuration would overtake the leader (for the '
                     'leader: lose the lead), and its rank at 30 / 60 / 100 % utilisation (ranking_sensitivity).</p>')
        parts.append(_table(_frame(con, SENSITIVITY_SQL, [workload_id]), "No sensitivity rows."))
    cost, label = (("cost_per_million_units_usd", f"$ per million {unit}") if per_million
                   else ("cost_per_unit_usd", f"$ per {unit.removesuffix('s')}"))
    estimates = _frame(con, ESTIMATES_SQL.format(cost=cost, cost_label=label), [workload_id])
    if not estimates.empty:
        parts.append(f'<h4 class="estimates">Lower-confidence ESTIMATES ({len(estimates)}): throughput not measured, '
                     "ranked apart</h4>")
        parts.append('<p class="note">No matching benchmark run exists for these configurations; their throughput is '
                     "derived from another provider or GPU model (estimate_basis). Never mixed into the ranking "
                     "above.</p>")
        parts.append(_table(estimates, ""))
    parts.append(_vendor_baseline(con, workload_id, cost, label))
    excluded = _frame(con, EXCLUDED_SQL, [workload_id])
    parts.append(f"<h4>Excluded configurations ({len(excluded)})</h4>")
    parts.append(_table(excluded, "None: every configuration was ranked."))
    return "\n".join(parts)



def _memory_fit_section(con: duckdb.DuckDBPyConnection) -> str:
    fit = _frame(con, MEMORY_FIT_SQL)
    if fit.empty:
        return '<p class="empty">No data yet: the memory_fit mart is empty.</p>'
    fit["verdict"] = [
        # No fewest count = no count works (e.g. the precision is not native there), whatever `fits` says.
        "does not fit" if not f or pd.isna(m) else ("fits on 1 GPU" if (m == 1) else "fits on several GPUs")
        for f, m in zip(fit["fits"], fit["min_gpus"])]
    fit["label"] = ["—" if pd.isna(m) else f"min {int(m)} GPU" for m in fit["min_gpus"]]
    return _figure(charts.to_svg(charts.memory_fit_heatmap(fit)),
                   "Does the workload fit in GPU memory, and on how few GPUs (from memory_fit).")


def _price_history_section(con: duckdb.DuckDBPyConnection) -> str:
    history = _frame(con, PRICE_HISTORY_SQL)
    if history.empty:
        return '<p class="empty">No data yet: offer_history has no priced observations.</p>'
    parts = []
    for gpu_model, frame in history.groupby("gpu_model", sort=True):
        parts.append(f"<h3>{html.escape(str(gpu_model))}</h3>")
        parts.append(_figure(charts.to_svg(charts.price_history(frame, str(gpu_model))),
                             f"{len(frame)} observation(s) of {frame['series'].nunique()} offer(s)."))
    return "\n".join(parts)
