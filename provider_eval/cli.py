"""The provider-eval command line: refresh, rank, explain, sql."""
import os
import sys
from enum import Enum
from pathlib import Path
from typing import Annotated

from provider_eval import quiet_exit

quiet_exit.install()

# Quiet, readable Prefect by default: no telemetry (its heartbeat races the ephemeral server's
# SQLite and prints tracebacks), and only warnings unless --verbose.
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("DO_NOT_TRACK", "1")
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")

import duckdb  # noqa: E402
import typer  # noqa: E402
from rich.console import Console  # noqa: E402

from provider_eval import console_logs, exit_codes, output, warehouse  # noqa: E402
from provider_eval.errors import ConfigError, ProviderEvalError  # noqa: E402
from provider_eval.exit_codes import ExitCode  # noqa: E402
from provider_eval.paths import DEFAULT_SOURCES, DEFAULT_WORKLOADS, warehouse_or_default  # noqa: E402

app = typer.Typer(add_completion=False, no_args_is_help=True, epilog=exit_codes.HELP,
                  help="Rank rentable accelerator configurations by cost per completed workload.")
err = Console(stderr=True, soft_wrap=True)


class Format(str, Enum):
    table = "table"
    json = "json"
    csv = "csv"


WarehouseOpt = Annotated[Path, typer.Option("--warehouse", "-w", callback=warehouse_or_default, help=(
    "DuckDB warehouse file (default: $PROVIDER_EVAL_WAREHOUSE, else warehouse/provider_eval.duckdb; "
    "docs/configuration.md)."))]
FormatOpt = Annotated[Format, typer.Option("--format", "-f", help="Output format.")]


def _fail(message: str, code: int = ExitCode.FAILED) -> None:
    err.print(f"[bold red]error:[/] {console_logs.escape(output.printable(message))}", highlight=False)
    raise typer.Exit(int(code))


# Rejected whole files, as the published ingest_manifest records them (one line each on stderr).
REJECTED_FILES_SQL = """
    select source_name, original_path, reason from ingest_manifest
    where status = 'rejected' order by source_name, original_path"""


@app.command()
def refresh(
    sources: Annotated[Path, typer.Option(help="sources.yaml declaring the inputs.")] = DEFAULT_SOURCES,
    workloads: Annotated[Path, typer.Option(help="workloads.yaml declaring the workloads.")] = DEFAULT_WORKLOADS,
    warehouse_path: WarehouseOpt = None,
    task_runner: Annotated[str, typer.Option(help="Where parsing fans out: threads, dask or ray.")] = "threads",
    cluster_address: Annotated[str | None, typer.Option(help="Existing Dask scheduler / Ray address.")] = None,
    allow_rejected: Annotated[bool, typer.Option(
        "--allow-rejected", help="Exit 0, not 4, when the refresh published but rejected a whole file or a fetch failed.")] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Show Prefect's run logs and tracebacks.")] = False,
) -> None:
    """Ingest, validate, model, check and publish the warehouse."""
    if verbose:
        os.environ["PREFECT_LOGGING_LEVEL"] = "INFO"
        os.environ[console_logs.VERBOSE_ENV] = "1"
    from flows.refresh import refresh as refresh_flow
    from flows.task_runners import make_task_runner

    from flows import progress
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    console_logs.quiet_tracebacks()
    runner = make_task_runner(task_runner, cluster_address)
    bar = Progress(SpinnerColumn(), TextColumn("refresh: {task.description}"), BarColumn(),
                   MofNCompleteColumn(), TimeElapsedColumn(), console=err, transient=True,
                   disable=not err.is_terminal)  # a log file gets the result lines only
    with bar:
        task_id = bar.add_task("starting Prefect", total=None)

        def show(name: str, completed: int | None, total: int | None) -> None:
            bar.update(task_id, description=name, completed=completed or 0, total=total)

        stop_listening = progress.listen(show)
        try:
            state = refresh_flow.with_options(task_runner=runner)(
                sources=str(sources), workloads=str(workloads), warehouse_path=str(warehouse_path),
                return_state=True)
        finally:
            stop_listening()
    if not state.is_completed():
        unchanged = "" if "stays published" in (state.message or "") else \
            " The previously published warehouse (if any) is unchanged."
        # A malformed sources.yaml / workloads.yaml is the user's to fix (2), not a failed run (5).
        code = ExitCode.USAGE if isinstance(_state_error(state), ConfigError) else ExitCode.FAILED
        _fail(f"refresh failed: {console_logs.one_line(state.message or '')}{unchanged}", code)
    summary = state.result()
    err.print(
        f"[green]published[/] {summary.warehouse}: {summary.files} file(s) "
        f"({summary.files_rejected} rejected), {summary.rows_in} row(s) in, "
        f"{summary.rows_accepted} accepted, {summary.rows_quarantined} quarantined",
        highlight=False,
    )
    if summary.rows_quarantined or summary.files_rejected:
        err.print("  see: provider-eval sql \"select * from quarantine\"  and  \"select * from ingest_manifest\"")
    if summary.files_rejected:
        _, rejected = _query(warehouse_path, REJECTED_FILES_SQL)
        for source_name, original_path, reason in rejected:
            err.print(output.printable(f"  rejected {original_path} (source {source_name}): {reason}"),
                      highlight=False, markup=False)
        if not allow_rejected:
            err.print(f"  exit {int(ExitCode.PARTIAL)}: published, but {summary.files_rejected} file(s) rejected "
                      "(--allow-rejected to exit 0)", highlight=False)
            raise typer.Exit(int(ExitCode.PARTIAL))


def _state_error(state) -> BaseException | None:
    """The exception a failed flow state carries (None when it carries none)."""
    try:
        result = state.result(raise_on_failure=False)
    except Exception as exc:  # noqa: BLE001 - a state whose result cannot be read carries no usable error
        return exc
    return result if isinstance(result, BaseException) else None


def _query(warehouse_path: Path, sql: str, params: list | None = None) -> tuple[list[str], list[tuple]]:
    with warehouse.connect_published(warehouse_path) as con:
        cur = con.execute(sql, params or [])
        return [d[0] for d in cur.description], cur.fetchall()


HEADERS = {"gpu_model": "GPU", "gpu_count": "GPUs", "billing_model": "billing", "offer_id": "offer",
           "usd_per_gpu_hour": "$/GPU-h", "usd_per_node_hour": "$/node-h", "hours_billed": "hours billed",
           "hours_needed": "hours needed", "total_cost_usd": "total $", "cost_per_unit_usd": "$ per unit",
           "exclusion_reasons": "excluded because", "units_per_hour": "units/h",
           "throughput_source": "throughput", "source_name": "source", "config_id": "config (for explain)",
           "cost_per_million_units_usd": "$ per million units"}

# Units so small that a cost per unit prints as a string of zeros: shown per million instead.
PER_MILLION_UNITS = {"output_tokens", "total_tokens"}


def _cost_column(unit: str | None) -> tuple[str, dict[str, str]]:
    """The cost column to show for a workload's unit, with headers naming the unit (tokens: per million)."""
    if unit in PER_MILLION_UNITS:
        return "cost_per_million_units_usd", {**HEADERS, "cost_per_million_units_usd":
                                              f"$ per million {unit.replace('_', ' ')}"}
    return "cost_per_unit_usd", {**HEADERS, "cost_per_unit_usd": f"$ per {unit.removesuffix('s') if unit else 'unit'}"}

RANK_COLUMNS = ["workload_id", "rank", "offer_id", "provider", "vendor", "gpu_model", "gpu_count", "billing_model",
                "cost_per_unit_usd", "total_cost_usd", "hours_billed", "usd_per_gpu_hour", "unit",
                "benchmark_run_ids", "node_count", "throughput_source", "is_interruptible", "source_name",
                "validation_verdict", "cost_per_million_units_usd", "config_id", "also_seen_in",
                "quote_age_days", "risk_flags", "risk_notes", "warnings"]

# The rank filters, each a condition on the ranked rows' columns (the flags are computed in SQL:
# workload_costs.risk_flags and its inputs); a null parameter means "no filter".
RANK_FILTERS = """
    ($1 is null or workload_id = $1) and ($2 is null or rank <= $2)
    and ($3 is null or billing_model = $3) and (not $4 or not is_interruptible)
    and ($5 is null or lower(provider) = lower($5)) and ($6 is null or gpu_model = $6)
    and (not $7 or validation_verdict = 'pass')
    and ($8 is null or quote_age_days <= $8)
    and ($9 is null or lower(vendor) = lower($9))"""


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


def _excluded_line(workload_id: str, n_excluded: int, reasons: list[str]) -> str:
    """The excluded summary: a configuration counts once, though it may have several reasons."""
    noun = "configuration" if n_excluded == 1 else "configurations"
    return (f"  {n_excluded} {noun} excluded; reasons (a configuration may have several): {', '.join(reasons)}"
            f" — see: provider-eval explain {workload_id}")


@app.command()
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
            _fail(f"unknown GPU {gpu!r}; known: {', '.join(feasibility.load_catalog().gpu_models)}", ExitCode.USAGE)
    select = f"select {', '.join(RANK_COLUMNS)} from {{}} where {RANK_FILTERS} order by workload_id, rank"
    params = [workload, top, billing, no_spot, provider, gpu_model, validated_only, max_quote_age,
              vendor.value if vendor else None]
    cols, rows = _query(warehouse_path, select.format("rankings"), params)
    guessed = _query(warehouse_path, select.format("estimate_rankings"), params)[1] if estimates else []
    if fmt != Format.table:
        # Measured first; each row says where its throughput came from (throughput_source).
        output.render(cols, rows + guessed, fmt.value)
        return
    _, excluded = _query(warehouse_path, EXCLUDED_SUMMARY_SQL, [workload])
    if not excluded:
        _fail(f"no workload {workload!r} in the warehouse" if workload else "the warehouse has no workloads",
              ExitCode.USAGE if workload else ExitCode.FAILED)
    filtered = any(p is not None and p is not False for p in params[2:])  # --max-quote-age 0 filters too
    for workload_id, n_excluded, unit, reasons in excluded:
        cost_column, headers = _cost_column(unit)
        headers = {**headers, "risk_flags": "flags", "validation_verdict": "validation"}
        shown = [cost_column if c == "{cost}" else c for c in (RANK_TABLE_WIDE if wide else RANK_TABLE)]
        idx = [cols.index(c) for c in shown]
        per = f"per million {unit}" if cost_column == "cost_per_million_units_usd" else f"per completed unit ({unit})"
        mine = [tuple(r[i] for i in idx) for r in rows if r[0] == workload_id]
        if mine:
            # Without --top, a table shows the cheapest TABLE_ROWS_SHOWN and says how to see the rest.
            limit = top or output.TABLE_ROWS_SHOWN
            output.render(shown, mine[:limit], "table", title=f"{workload_id}: cost {per}", headers=headers,
                          no_wrap={"config_id"})
            if len(mine) > limit:
                err.print(f"  … {len(mine) - limit:,} more ranked configuration(s) not shown — see all with "
                          f"--top {len(mine)} or --format csv|json", highlight=False)
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


EXPLAIN_COLUMNS = ["offer_id", "provider", "gpu_model", "gpu_count", "billing_model", "status",
                   "exclusion_reasons", "usd_per_node_hour", "units_per_hour", "hours_needed", "hours_billed",
                   "compute_cost_usd", "storage_cost_usd", "egress_cost_usd", "licence_cost_usd",
                   "setup_cost_usd", "support_cost_usd", "total_cost_usd", "cost_per_unit_usd",
                   "benchmark_run_ids", "throughput_source", "estimate_basis", "node_count", "gpus_per_node",
                   "utilisation", "busy_hours", "billing_period", "billing_periods", "usd_per_node_month",
                   "cost_per_million_units_usd", "is_interruptible", "risk_notes", "tier", "commitment_term_hours",
                   "source_name", "unit", "quantity", "config_id", "observed_at", "benchmark_node_count",
                   "benchmark_match_detail", "also_seen_in"]

SENSITIVITY_COLUMNS = ["rank", "provider", "offer_id", "gpu_model", "gpu_count", "billing_model", "usd_per_gpu_hour",
                       "total_cost_usd", "compared_with_offer_id", "break_even_usd_per_gpu_hour",
                       "break_even_usd_per_node_hour", "break_even_change_pct", "rank_at_30pct", "rank_at_60pct",
                       "rank_at_100pct", "break_even_usd_per_node_month"]
SENSITIVITY_HEADERS = {**HEADERS, "compared_with_offer_id": "vs", "break_even_usd_per_gpu_hour": "break-even $/GPU-h",
                       "break_even_usd_per_node_hour": "break-even $/node-h", "break_even_change_pct": "price change %",
                       "rank_at_30pct": "rank @30%", "rank_at_60pct": "rank @60%", "rank_at_100pct": "rank @100%",
                       "break_even_usd_per_node_month": "break-even $/node-month (monthly)"}


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
    return out + list(row["risk_notes"] or [])


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


@app.command()
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
        _fail("give the configuration either as CONFIG or as --offer, not both", ExitCode.USAGE)
    chosen = config or offer
    cols, rows = _query(
        warehouse_path,
        f"select {', '.join(EXPLAIN_COLUMNS)} from workload_costs "
        "where workload_id = $1 and ($2 is null or offer_id = $2 or config_id = $2) "
        "order by status desc, cost_per_unit_usd nulls last, provider, offer_id, billing_model",
        [workload, chosen],
    )
    if not rows:
        _fail(f"no costs for workload {workload!r}" + (f" and configuration {chosen!r} (a config id from "
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
            runs = _query(warehouse_path, "select run_id, source_name, source_file, benchmark_format, scenario "
                          "from benchmark_runs where list_contains($1, run_id) order by run_id",
                          [record["benchmark_run_ids"] or []])[1]
            print("  sources:")
            for line in _sources(record, runs):
                print(f"    {line}")
        if any("NO_BENCHMARK" in (dict(zip(cols, r))["exclusion_reasons"] or []) for r in rows):
            _print_closest_runs(warehouse_path, workload)
    else:
        cost_column, headers = _cost_column(rows[0][cols.index("unit")])
        shown = ["config_id", "offer_id", "status", "throughput_source", "exclusion_reasons",
                 "usd_per_node_hour", "hours_billed", "total_cost_usd", cost_column]
        idx = [cols.index(c) for c in shown]
        output.render(shown, [tuple(r[i] for i in idx) for r in rows], "table",
                      title=f"{workload}: every configuration (cost lines: explain {workload} CONFIG)",
                      headers=headers)
        if any("NO_BENCHMARK" in (r[cols.index("exclusion_reasons")] or []) for r in rows):
            _print_closest_runs(warehouse_path, workload)
        sens_cols, sens = _query(warehouse_path, f"select {', '.join(SENSITIVITY_COLUMNS)} from ranking_sensitivity "
                                 "where workload_id = $1 order by rank", [workload])
        if sens:
            output.render(sens_cols, sens, "table", headers=SENSITIVITY_HEADERS,
                          title=f"{workload}: sensitivity — break-even price to overtake the leader (the leader: to "
                                "lose the lead), and the rank at 30 / 60 / 100 % utilisation")


def _print_closest_runs(warehouse_path: Path, workload: str) -> None:
    """The benchmark runs nearest the workload and what each does not match (the closest_runs mart)."""
    cols, runs = _query(warehouse_path, "select closeness_rank, run_id, gpu_model, gpu_count, model_id, precision, "
                        "engine, mismatches from closest_runs where workload_id = $1 order by closeness_rank",
                        [workload])
    if not runs:
        print("  NO_BENCHMARK: no benchmark run is loaded at all; add one (docs/formats/benchmarks.md)")
        return
    shown = [(*r[:-1], "; ".join(r[-1]) or "matches (see the configurations above)") for r in runs]
    output.render(cols[:-1] + ["what does not match"], shown, "table",
                  title=f"{workload}: NO_BENCHMARK — the closest benchmark runs and what does not match")


@app.command()
def sql(
    query: Annotated[str, typer.Argument(help="SQL to run against the published warehouse (read-only).")],
    warehouse_path: WarehouseOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Run ad-hoc SQL on the published warehouse, read-only: it can read the warehouse and write no file."""
    try:
        cols, rows = _query(warehouse_path, query)
    except duckdb.Error as exc:
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if isinstance(exc, duckdb.PermissionException) or "locked" in message or "read-only" in message:
            message += (" (provider-eval sql is read-only: it reads the published warehouse only; no file access, "
                        "attach, extensions or settings)")
        _fail(message, ExitCode.USAGE)
    output.render(cols, rows, fmt.value)


class Mode(str, Enum):
    inference = "inference"
    training = "training"
    lora = "lora"
    qlora = "qlora"


class Checkpointing(str, Enum):
    none = "none"
    selective = "selective"
    full = "full"


FIT_BREAKDOWN = ["weights_bytes_per_gpu", "kv_cache_bytes_per_gpu", "activation_bytes_per_gpu",
                 "optimizer_bytes_per_gpu", "reserve_bytes_per_gpu", "required_bytes_per_gpu",
                 "available_bytes_per_gpu", "headroom_bytes_per_gpu"]


@app.command("check-fit")
def check_fit(
    model: Annotated[str, typer.Option(help="Model id from data/reference/llm_models.csv, e.g. llama-3.1-70b.")],
    gpu: Annotated[str, typer.Option(help="GPU model (catalog name or alias), e.g. MI300X.")],
    precision: Annotated[str | None, typer.Option(
        help="Weight precision: bf16, fp16, fp8, int8, int4, nf4, fp6, fp4 (default bf16; nf4 for qlora).")] = None,
    gpus: Annotated[int, typer.Option(
        min=1, max=64, help="GPU count (tensor parallel or sharded training).")] = 1,
    context: Annotated[int | None, typer.Option(
        min=1, help="Tokens per sequence (default: the model's maximum).")] = None,
    concurrency: Annotated[int, typer.Option(
        min=1, help="Sequences at once (inference) or micro-batch per GPU (training).")] = 1,
    mode: Annotated[Mode, typer.Option(help="inference, or training (full fine-tune), lora, qlora.")] = Mode.inference,
    kv_precision: Annotated[str | None, typer.Option(help="KV cache precision (default: 16-bit).")] = None,
    engine: Annotated[str | None, typer.Option(help="Inference engine: vllm, sglang (memory fraction).")] = None,
    gpu_memory_utilization: Annotated[float | None, typer.Option(
        min=0.01, max=1.0, help="Override the engine's memory fraction.")] = None,
    activation_checkpointing: Annotated[Checkpointing | None, typer.Option(
        help="Training activations: none, selective (default), full recomputation.")] = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Does a model fit in GPU memory? Exit 0 fits, 1 does not fit, 3 unknown, 2 usage error."""
    from flows.ingest.workloads import qlora_base_problem, sixteen_bit_or_wider
    from provider_eval import feasibility

    # QLoRA means a 4-bit NF4 base unless stated; a 16-bit base is a usage error, never a silent bf16.
    if mode == Mode.qlora and (problem := qlora_base_problem(precision, sixteen_bit_or_wider())):
        _fail(f"--precision {precision}: {problem.replace('mode: lora', '--mode lora')}", 2)

    known = feasibility.load_catalog()
    model_id = known.resolve_model(model)
    if model_id is None:
        _fail(f"unknown model {model!r}; known: {', '.join(known.model_ids)}", 2)
    for name, value in (("precision", precision), ("kv-precision", kv_precision)):
        if value is not None and value.lower() not in known.precisions:
            _fail(f"unknown {name} {value!r}; known: {', '.join(known.precisions)}", 2)
    gpu_model = known.resolve_gpu(gpu)
    if gpu_model is None:
        _fail(f"unknown GPU {gpu!r} ({known.gpu_problem(gpu)}); known: {', '.join(known.gpu_models)}", 2)
    result = feasibility.check_fit({
        "model_id": model_id, "precision": precision.lower() if precision else None,
        "kv_precision": kv_precision.lower() if kv_precision else None,
        "context_tokens": context, "concurrency": concurrency, "mode": mode.value,
        "engine": engine.lower() if engine else None, "gpu_memory_utilization": gpu_memory_utilization,
        "activation_checkpointing": activation_checkpointing.value if activation_checkpointing else None,
        "gpu_model": gpu_model, "gpu_count": gpus,
    })
    result.pop("workload_id", None)
    if fmt != Format.table:
        output.render(list(result), [tuple(result.values())], fmt.value)
    else:
        rows = [(c.removesuffix("_bytes_per_gpu").replace("_", " "), result[c],
                 f"{result[c] / 1e9:,.1f} GB" if result[c] is not None else "") for c in FIT_BREAKDOWN]
        output.render(["per GPU", "bytes", "GB"], rows, "table",
                      title=f"{result['model_id']} {result['precision']} ({result['mode']}, "
                            f"{result['context_tokens']} tokens x {result['concurrency']}) on "
                            f"{result['gpu_count']} x {result['gpu_model']}")
        print(f"{result['verdict']}; fewest {result['gpu_model']} GPUs that fit: "
              f"{result['min_gpus'] if result['min_gpus'] is not None else 'none up to 64'}")
        for reason in result["reasons"]:
            print(f"  - {reason}")
    raise typer.Exit(int({"fits": ExitCode.OK, "unknown": ExitCode.INCONCLUSIVE}.get(result["verdict"], ExitCode.NEGATIVE)))


@app.command("check-compat")
def check_compat(
    gpu: Annotated[str, typer.Option(help="GPU model (catalog name or alias), e.g. MI350X.")],
    rocm: Annotated[str | None, typer.Option(help="ROCm version, e.g. 6.4.1 (6.4 means every 6.4.x).")] = None,
    os_name: Annotated[str | None, typer.Option("--os", help="OS release, e.g. 'Ubuntu 22.04.5'.")] = None,
    kernel: Annotated[str | None, typer.Option(help="Kernel release (uname -r), e.g. 5.15.0-122-generic.")] = None,
    torch: Annotated[str | None, typer.Option(help="PyTorch version, e.g. 2.6.")] = None,
    engine: Annotated[str | None, typer.Option(help="Inference engine, e.g. vllm.")] = None,
    driver: Annotated[str | None, typer.Option(help="amdgpu driver version, e.g. 6.4.x or 30.10.1.")] = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Is a GPU + ROCm + OS + kernel + PyTorch + engine stack supported? Exit 0 supported, 1 unsupported, 3 unknown."""
    from provider_eval import feasibility

    # An unknown GPU is not a usage error: the check answers "unknown" with the reason.
    gpu_model = feasibility.load_catalog().resolve_gpu(gpu) or gpu
    result = feasibility.check_compat({
        "gpu_model": gpu_model, "rocm_version": rocm, "os": os_name, "kernel": kernel, "torch_version": torch,
        "engine": engine.lower() if engine else None, "amdgpu_driver_version": driver,
    })
    if fmt != Format.table:
        output.render(list(result), [tuple(result.values())], fmt.value)
    else:
        stack = ", ".join(f"{k}{v}" for k, v in (("ROCm ", rocm), ("", os_name), ("kernel ", kernel),
                                                 ("PyTorch ", torch), ("", engine), ("amdgpu ", driver)) if v)
        target = result["llvm_target"] or "gfx target unknown"
        print(f"{result['verdict']}: {result['gpu_model']} ({target}) with {stack or 'nothing declared'}")
        for reason in result["reasons"]:
            print(f"  - {reason}")
    raise typer.Exit(int({"supported": ExitCode.OK, "unsupported": ExitCode.NEGATIVE}.get(
        result["verdict"], ExitCode.INCONCLUSIVE)))


VERDICT_EXIT = {"pass": ExitCode.OK, "fail": ExitCode.NEGATIVE, "inconclusive": ExitCode.INCONCLUSIVE}


@app.command("validate-host")
def validate_host(
    host: Annotated[str, typer.Argument(help="The rented server: hostname or IP address.")],
    offer: Annotated[str, typer.Option("--offer", help="Offer id whose quote the host must match.")],
    user: Annotated[str, typer.Option(help="SSH login name.")] = "root",
    port: Annotated[int, typer.Option(help="SSH port.")] = 22,
    identity_file: Annotated[Path, typer.Option("--identity-file", "-i", help="Private key for key auth.")] = Path("~/.ssh/id_ed25519"),
    known_hosts: Annotated[Path, typer.Option(help="known_hosts holding the host's key (unknown keys are refused).")] = Path("~/.ssh/known_hosts"),
    timeout: Annotated[float, typer.Option(help="Seconds the whole probe may take on the host.")] = 300,
    connect_timeout: Annotated[float, typer.Option(help="Seconds for TCP connect, SSH handshake and auth.")] = 10,
    bench: Annotated[bool, typer.Option(help="Run the bf16 GEMM and HBM copy micro-benchmarks.")] = True,
    deep: Annotated[bool, typer.Option(help="Also run rccl-tests all_reduce_perf and RVS gst when installed (slow).")] = False,
    workload: Annotated[str | None, typer.Option(help="Also run a representative benchmark from an allow-listed "
                                                 "template (vllm-serve); its result is ingested as a measured run.")] = None,
    workload_param: Annotated[list[str] | None, typer.Option(help="Template parameter KEY=VALUE (repeatable), "
                                                             "e.g. model=meta-llama/Llama-3.1-8B-Instruct.")] = None,
    workload_timeout: Annotated[float, typer.Option(help="Seconds the representative benchmark may take.")] = 1800,
    warehouse_path: WarehouseOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Probe a rented host over SSH and check it against a quote before signing (exit 0 pass, 1 fail, 3 inconclusive)."""
    from flows.probe.validate import summary_json, validate_host as run_validation

    params = {}
    for item in workload_param or []:
        key, sep, value = item.partition("=")
        if not sep:
            _fail(f"--workload-param {item!r} is not KEY=VALUE", ExitCode.USAGE)
        params[key.strip()] = value.strip()
    try:
        with err.status(f"probing {host} over SSH"):
            record = run_validation(host, offer, user, port, identity_file.expanduser(), known_hosts.expanduser(),
                                    warehouse_path, timeout_s=timeout, connect_timeout_s=connect_timeout, bench=bench,
                                    deep=deep, workload=workload, workload_params=params,
                                    workload_timeout_s=workload_timeout)
    except ProviderEvalError as exc:
        # No verdict at all: unsafe input or unknown offer (2), refused or unreachable (5); never a verdict's code.
        _fail(f"no validation recorded: {exc}", exc.exit_code)
    if fmt == Format.json:
        print(summary_json(record))
    else:
        rows = [(c["check"], c["status"], c["message"]) for c in record["checks"]]
        if fmt == Format.csv:
            output.render(["check", "status", "message"], rows, "csv")
        else:
            output.render(["check", "status", "message"], rows, "table",
                          title=f"{host} vs offer {offer}: {record['verdict'].upper()}")
            err.print(f"evidence: {record['evidence_path']} (loaded into hardware_validations by the next refresh)",
                      highlight=False)
    raise typer.Exit(int(VERDICT_EXIT[record["verdict"]]))


@app.command()
def report(
    out: Annotated[Path | None, typer.Option("--out", "-o", help="HTML file to write (default: report.html "
                                             "beside the warehouse).")] = None,
    warehouse_path: WarehouseOpt = None,
) -> None:
    """Write one self-contained HTML report (charts as inline SVG; works offline)."""
    from provider_eval.report import write_report

    target = out or warehouse_path.parent / "report.html"
    with err.status("rendering the report"):
        written = write_report(warehouse_path, target)
    print(written)


# `provider-eval inputs` lives in its own module (docs/inputs.md).
from provider_eval.inputs_cmd import inputs as _inputs  # noqa: E402

app.command("inputs")(_inputs)


def _show_exit_codes() -> None:
    """Every command's --help ends with the one exit-code table (commands added later get it too)."""
    for command in app.registered_commands:
        command.epilog = command.epilog or exit_codes.HELP


def main() -> None:
    """Console entry point: every failure is one line on stderr (tracebacks with --verbose) and a documented code."""
    _show_exit_codes()
    try:
        app()
    except ProviderEvalError as exc:
        err.print(f"[bold red]error:[/] {console_logs.escape(output.printable(str(exc)))}", highlight=False)
        sys.exit(int(exc.exit_code))
    except Exception as exc:  # noqa: BLE001 - the last boundary: one line, not a traceback, unless --verbose
        if console_logs.verbose():
            raise
        err.print(f"[bold red]error:[/] {console_logs.escape(output.printable(console_logs.describe(exc)))}",
                  highlight=False)
        sys.exit(int(ExitCode.FAILED))
