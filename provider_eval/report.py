"""The self-contained HTML report: what the published warehouse says, as charts and tables."""
import datetime as dt
import html
import os
import urllib.request
from decimal import Decimal
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd

from provider_eval import charts, dbt_docs_site, warehouse
from provider_eval.errors import ProviderEvalError

# A short configuration label; the offer id is added only where the short one would be ambiguous.
CONFIG_LABEL = """gpu_count || '× ' || gpu_model || ' · ' || provider || ' · ' || billing_model
    || case when count(*) over (partition by workload_id, provider, gpu_model, gpu_count, billing_model) > 1
            then ' · ' || offer_id else '' end"""

WORKLOADS_SQL = """
    select workload_id, any_value(unit) as unit,
           count(*) filter (where status = 'ranked') as ranked,
           count(*) filter (where status = 'excluded') as excluded
    from workload_costs group by all
    -- Workloads with a ranking first: the answer before the gaps.
    order by ranked = 0, workload_id"""

RANKED_SQL = f"""
    select rank, {CONFIG_LABEL} as configuration, offer_id, cost_per_unit_usd::double as cost_per_unit_usd,
           total_cost_usd::double as total_cost_usd, hours_billed::double as hours_billed,
           cost_per_million_units_usd::double as cost_per_million_units_usd
    from rankings where workload_id = $1 order by rank"""

# Lower-confidence rows, shown apart from the measured ranking and labelled as estimates.
ESTIMATES_SQL = """
    select rank, config_id as configuration, offer_id, {cost} as "{cost_label}",
           total_cost_usd, hours_billed, estimate_basis
    from estimate_rankings where workload_id = $1 order by rank"""

# How the ranking moves with price and utilisation (ranking_sensitivity).
SENSITIVITY_SQL = """
    select s.rank, r.config_id as configuration, s.usd_per_gpu_hour as "$/GPU-h today",
           s.break_even_usd_per_gpu_hour as "break-even $/GPU-h", s.break_even_change_pct as "price change %",
           s.usd_per_node_month as "$/node-month today",
           s.break_even_usd_per_node_month as "break-even $/node-month",
           s.break_even_utilisation as "beats on-demand above utilisation",
           s.rank_at_30pct as "rank @30 %", s.rank_at_60pct as "rank @60 %", s.rank_at_100pct as "rank @100 %"
    from ranking_sensitivity as s
    join rankings as r using (workload_id, rank)
    where s.workload_id = $1 order by s.rank"""

# Units whose cost per unit is a string of zeros: shown per million (as the CLI does).
PER_MILLION_UNITS = {"output_tokens", "total_tokens"}

EXCLUDED_SQL = """
    select provider, offer_id, gpu_model, gpu_count, billing_model,
           array_to_string(exclusion_reasons, ', ') as reasons,
           -- Runs that came close and why they do not count (engine, shape, SLO), when there were any.
           benchmark_match_detail as "benchmark runs considered"
    from workload_costs where workload_id = $1 and status = 'excluded'
    order by reasons, provider, offer_id, billing_model"""

# Per ranked configuration: median request latency of its evidence runs where benchmark_requests has
# any, else the hours the workload takes; then which points no other point beats on both axes.
COST_VS_TIME_SQL = f"""
    with ranked as (
        select * from rankings where workload_id = $1
    ),

    evidence as (
        select r.workload_id, r.offer_id, r.provider, r.billing_model, unnest(r.benchmark_run_ids) as run_id
        from ranked as r
    ),

    latency as (
        select e.workload_id, e.offer_id, e.provider, e.billing_model, median(q.latency_ms) as p50_latency_ms
        from evidence as e join benchmark_requests as q on q.run_id = e.run_id
        where q.latency_ms is not null
        group by all
    ),

    points as (
        select {CONFIG_LABEL} as configuration, r.offer_id, r.cost_per_unit_usd::double as cost_per_unit_usd,
               l.p50_latency_ms, r.hours_needed::double as hours_needed,
               r.cost_per_million_units_usd::double as cost_per_million_units_usd
        from ranked as r left join latency as l using (workload_id, offer_id, provider, billing_model)
    ),

    chosen as (
        select *,
               case when count(p50_latency_ms) over () > 0 then p50_latency_ms else hours_needed end as x_value,
               count(p50_latency_ms) over () > 0 as is_latency
        from points
    ),

    plotted as (
        select * from chosen where x_value is not null
    ),

    final as (
        select p.*,
               case when exists (
                   select 1 from plotted as o
                   where o.x_value <= p.x_value and o.cost_per_unit_usd <= p.cost_per_unit_usd
                     and (o.x_value < p.x_value or o.cost_per_unit_usd < p.cost_per_unit_usd)
               ) then 'dominated' else 'on the Pareto front' end as front
        from plotted as p
    )

    select * from final order by x_value, cost_per_unit_usd"""

# AMD against the NVIDIA baseline for one workload (docs/cost-model.md "NVIDIA offers: the baseline"):
# per vendor, its ranked (measured) configurations, the cheapest, and how many were excluded (listed with
# their reasons under Excluded configurations).
VENDOR_BASELINE_SQL = """
    with costs as (
        select * from workload_costs where workload_id = $1 and vendor is not null and throughput_source = 'measured'
    ),

    ranked as (
        select vendor, count(*) as ranked, arg_min(config_id, cost_per_unit_usd) as cheapest,
               min({cost})::double as cheapest_cost
        from rankings where workload_id = $1 and vendor is not null group by vendor
    ),

    excluded as (
        select vendor, count(*) filter (where status = 'excluded') as excluded from costs group by vendor
    )

    select e.vendor, coalesce(r.ranked, 0) as "ranked (measured)", r.cheapest as "cheapest configuration",
           r.cheapest_cost as "{label}", e.excluded as "excluded (reasons: Excluded configurations)"
    from excluded as e left join ranked as r using (vendor)
    order by e.vendor"""

MEMORY_FIT_SQL = """
    select workload_id, gpu_model, bool_or(fits) as fits, min(min_gpus) as min_gpus
    from memory_fit group by all order by all"""

PRICE_HISTORY_SQL = """
    select gpu_model, provider || ' · ' || offer_id || ' · ' || billing_model as series,
           observed_at, usd_per_gpu_hour::double as usd_per_gpu_hour
    from offer_history where usd_per_gpu_hour is not null order by gpu_model, series, observed_at"""

VALIDATIONS_SQL = """
    select host, offer_id, verdict, reasons, validated_at
    from hardware_validations
    where is_latest_for_offer  -- the one definition of latest (int_latest_validations), as ranking uses
    order by validated_at desc"""

FRESHNESS_SQL = """
    select source_name, count(*) as offers, count(*) filter (where is_stale) as stale_offers,
           min(observed_at) as oldest_observed_at, max(observed_at) as newest_observed_at
    from offers group by all order by source_name"""

MANIFEST_SQL = """
    select source_name, status, count(*) as files, sum(rows_in) as rows_in,
           sum(rows_accepted) as rows_accepted, sum(rows_quarantined) as rows_quarantined,
           max(first_seen_at) as last_file_seen_at
    from ingest_manifest group by all order by all"""

REJECTED_SQL = """
    select source_name, original_path, reason from ingest_manifest where status = 'rejected' order by all"""

QUARANTINE_SQL = """
    select reason_code, source_name, count(*) as rows from quarantine group by all order by rows desc, reason_code, source_name"""

CSS = """
body{font-family:DejaVu Sans,Helvetica,Arial,sans-serif;margin:2rem auto;max-width:1100px;color:#222;padding:0 1rem}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{border-bottom:2px solid #2f6f9f;padding-bottom:.2rem;margin-top:2.2rem}
h3{margin-top:1.6rem}.meta,.note{color:#555}.empty{background:#f4f4f4;border-left:4px solid #999;padding:.6rem 1rem}
table{border-collapse:collapse;margin:.6rem 0;font-size:.88rem}th,td{border:1px solid #ccc;padding:.25rem .5rem;text-align:left}
th{background:#eef3f7}td.num{text-align:right;font-variant-numeric:tabular-nums}figure{margin:.6rem 0}
nav a{margin-right:1rem}
"""


def _frame(con: duckdb.DuckDBPyConnection, sql: str, params: list | None = None) -> pd.DataFrame:
    return con.execute(sql, params or []).df()


def _cell(value) -> str:
    if value is None or (isinstance(value, float) and pd.isna(value)) or value is pd.NaT:
        return "<td></td>"
    if isinstance(value, (list, tuple, np.ndarray)):
        # List columns (e.g. reasons) arrive as arrays; show them as one readable cell.
        return f"<td>{html.escape('; '.join(str(v) for v in list(value)))}</td>"
    if isinstance(value, (pd.Timestamp, dt.datetime)):
        return f"<td>{html.escape(value.strftime('%Y-%m-%d %H:%M UTC'))}</td>"
    if isinstance(value, (int, float, Decimal)) and not isinstance(value, bool):
        text = f"{value:,.4f}".rstrip("0").rstrip(".") if isinstance(value, (float, Decimal)) else f"{value:,}"
        return f'<td class="num">{text}</td>'
    return f"<td>{html.escape(str(value))}</td>"


def _table(frame: pd.DataFrame, empty: str) -> str:
    if frame.empty:
        return f'<p class="empty">{html.escape(empty)}</p>'
    head = "".join(f"<th>{html.escape(c)}</th>" for c in frame.columns)
    rows = "".join("<tr>" + "".join(_cell(v) for v in row) + "</tr>"
                   for row in frame.astype(object).itertuples(index=False))
    return f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"


# The cost-vs-time chart's label geometry (charts.cost_vs_time: 10 px text, 7 px right of and above its point).
LABEL_CHAR_PX, LABEL_HEIGHT_PX, LABEL_DX_PX, CHART_HEIGHT_PX = 6.2, 12, 7, 260


def chart_labels(points: pd.DataFrame, column: str, width_px: float = charts.WIDTH) -> tuple[list[str], int]:
    """One label per point that does not overlap another: points at the same spot share one label
    ("A (+2 more here)"); a label whose box would cross a kept one is left out and counted on the one
    it would cross ("B (+3 nearby)"). Returns the labels (empty where left out) and how many were left out."""
    xs, ys = points["x_value"].astype(float), points[column].astype(float)
    span_x, span_y = (xs.max() - xs.min()) or 1.0, (ys.max() - ys.min()) or 1.0
    px = [(x - xs.min()) / span_x * width_px for x in xs]
    py = [(ys.max() - y) / span_y * CHART_HEIGHT_PX for y in ys]
    same: dict[tuple, list[int]] = {}
    for i, key in enumerate(zip(xs.round(9), ys.round(12))):
        same.setdefault(key, []).append(i)
    labels, kept, owners, nearby, left_out = [""] * len(points), [], [], {}, 0

    def box_of(i: int, text: str) -> tuple:
        return (px[i] + LABEL_DX_PX, py[i] - LABEL_HEIGHT_PX - 1, px[i] + LABEL_DX_PX + LABEL_CHAR_PX * len(text), py[i] - 1)

    def crosses(box: tuple, other: tuple) -> bool:
        return box[0] < other[2] and other[0] < box[2] and box[1] < other[3] and other[1] < box[3]

    for group in same.values():
        first = group[0]
        text = str(points["configuration"].iloc[first])
        if len(group) > 1:
            text += f" (+{len(group) - 1} more here)"
        box = box_of(first, text)
        blocker = next((k for k, other in enumerate(kept) if crosses(box, other)), None)
        if blocker is not None:
            left_out += 1
            nearby[blocker] = nearby.get(blocker, 0) + len(group)
            continue
        kept.append(box)
        owners.append(first)
        labels[first] = text
    # A label that hid others says how many: where the longer text still crosses no other label.
    for k, count in nearby.items():
        longer = f"{labels[owners[k]]} (+{count} nearby)"
        box = box_of(owners[k], longer)
        if not any(crosses(box, other) for j, other in enumerate(kept) if j != k):
            labels[owners[k]], kept[k] = longer, box
    return labels, left_out


def _figure(svg: str, caption: str) -> str:
    return f'<figure class="chart">{svg}<figcaption class="note">{html.escape(caption)}</figcaption></figure>'


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


def _vendor_baseline(con: duckdb.DuckDBPyConnection, workload_id: str, cost: str, label: str) -> str:
    """AMD vs NVIDIA baseline for one workload: only what the warehouse ranks, and why the rest is out."""
    frame = _frame(con, VENDOR_BASELINE_SQL.format(cost=cost, label=label), [workload_id])
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


def render(con: duckdb.DuckDBPyConnection, warehouse_path: Path, docs_href: str | None = None,
           docs_problem: str | None = None) -> str:
    """The whole report as one HTML document: inline CSS and SVG, no script, nothing fetched.

    docs_href: a relative link to the warehouse's dbt docs site (every model and column), if written;
    docs_problem: why it was not.
    """
    workloads = _frame(con, WORKLOADS_SQL)
    refreshed = con.execute("select max(first_seen_at) from ingest_manifest").fetchone()[0]
    generated = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    nav = "".join(f'<a href="#w-{html.escape(w)}">{html.escape(w)}</a>' for w in workloads["workload_id"])
    sections = [_workload_section(con, w, u) for w, u in zip(workloads["workload_id"], workloads["unit"])]
    docs_link = (f'<a href="{html.escape(docs_href)}" id="sql-docs">tables and columns (dbt docs)</a>'
                 if docs_href else "")
    docs_note = f'<p class="meta" id="sql-docs-missing">{html.escape(docs_problem)}</p>' if docs_problem else ""
    body = f"""
<h1>provider-eval report</h1>
<p class="meta">Warehouse {html.escape(str(warehouse_path))} · report generated {generated}
 · newest input file seen {html.escape(refreshed.strftime('%Y-%m-%d %H:%M UTC') if refreshed else 'never')}</p>
<nav>{nav}<a href="#memory-fit">memory fit</a><a href="#prices">price history</a>
<a href="#validations">hardware validations</a><a href="#freshness">data freshness</a>{docs_link}</nav>
{docs_note}
<h2 id="costs">Cost per completed unit, per workload</h2>
{_table(workloads, "No workloads in the warehouse.")}
<h3 id="vendor-baseline">AMD vs NVIDIA baseline</h3>
{_vendor_summary(con)}
{''.join(sections)}
<h2 id="memory-fit">Memory fit (GPU model × workload)</h2>
{_memory_fit_section(con)}
<h2 id="prices">Price history per GPU model</h2>
{_price_history_section(con)}
<h2 id="validations">Latest hardware validations</h2>
{_table(_frame(con, VALIDATIONS_SQL), "No data yet: no host has been validated (hardware_validations is empty).")}
<h2 id="freshness">Data freshness and quarantine</h2>
<h3>Current offers by source</h3>
{_table(_frame(con, FRESHNESS_SQL), "No offers.")}
<h3>Input files</h3>
{_table(_frame(con, MANIFEST_SQL), "No input files.")}
<h3>Rejected files</h3>
{_table(_frame(con, REJECTED_SQL), "None.")}
<h3>Quarantined rows by reason</h3>
{_table(_frame(con, QUARANTINE_SQL), "None: every input row was accepted.")}
"""
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>provider-eval report</title><style>{CSS}</style></head><body>{body}</body></html>\n")


def _docs_site(warehouse_path: Path, out: Path) -> tuple[str | None, str | None]:
    """Write the dbt docs site beside the warehouse: the report's link to it, or why there is none."""
    if not warehouse_path.exists():
        return None, None  # connect_published says what is wrong
    # Here, not in every refresh: generating the site costs dbt's start-up and a parse (~3-5 CPU-s).
    try:
        site = dbt_docs_site.generate(warehouse_path.absolute())
    except (OSError, ProviderEvalError) as exc:  # e.g. a warehouse folder this user cannot write
        return None, f"The dbt docs site could not be written beside the warehouse: {exc}"
    return urllib.request.pathname2url(os.path.relpath(site, out.absolute().parent)), None


def write_report(warehouse_path: Path, out: Path) -> Path:
    """Render the published warehouse's report to one HTML file, and its dbt docs site beside the warehouse."""
    docs_href, docs_problem = _docs_site(warehouse_path, out)
    with warehouse.connect_published(warehouse_path) as con:
        page = render(con, warehouse_path, docs_href, docs_problem)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(page, encoding="utf-8")
    tmp.replace(out)
    return out
