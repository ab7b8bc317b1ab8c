"""The self-contained HTML report: what the published warehouse says, as charts and tables."""
import datetime as dt
import html
import os
import urllib.request
from pathlib import Path

import duckdb

from provider_eval import dbt_docs_site, warehouse
from provider_eval.errors import ProviderEvalError
from provider_eval.report.baseline import VENDOR_BASELINE_SQL, _vendor_baseline, _vendor_summary
from provider_eval.report.cells import CSS, _frame, _table
from provider_eval.report.labels import chart_labels
from provider_eval.report.queries import (COST_VS_TIME_SQL, FRESHNESS_SQL, MANIFEST_SQL, QUARANTINE_SQL,
                                          REJECTED_SQL, VALIDATIONS_SQL, WORKLOADS_SQL)
from provider_eval.report.sections import _memory_fit_section, _price_history_section, _workload_section

# What callers and tests read from provider_eval.report, wherever it now lives.
__all__ = ["COST_VS_TIME_SQL", "VENDOR_BASELINE_SQL", "_vendor_baseline", "_vendor_summary", "chart_labels",
           "render", "write_report"]


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
