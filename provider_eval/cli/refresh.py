"""`provider-eval refresh`: run the refresh flow with a progress bar, then say what was published."""
import os
from pathlib import Path
from typing import Annotated

import typer

from provider_eval import console_logs, output
from provider_eval.cli.shared import WarehouseOpt, err, fail, query
from provider_eval.errors import ConfigError
from provider_eval.exit_codes import ExitCode
from provider_eval.paths import DEFAULT_SOURCES, DEFAULT_WORKLOADS

# Rejected whole files, as the published ingest_manifest records them (one line each on stderr).
REJECTED_FILES_SQL = """
    select source_name, original_path, reason from ingest_manifest
    where status = 'rejected' order by source_name, original_path"""


def refresh(
    sources: Annotated[Path, typer.Option(help="sources.yaml declaring the inputs.")] = DEFAULT_SOURCES,
    workloads: Annotated[Path, typer.Option(help="workloads.yaml declaring the workloads.")] = DEFAULT_WORKLOADS,
    warehouse_path: WarehouseOpt = None,
    task_runner: Annotated[str, typer.Option(help="Where parsing fans out: threads, dask or ray.")] = "threads",
    cluster_address: Annotated[str | None, typer.Option(help="Existing Dask scheduler / Ray address.")] = None,
    allow_rejected: Annotated[bool, typer.Option(
        "--allow-rejected", help="Exit 0, not 4, when the refresh published but rejected a whole file or a fetch failed.")] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Show Prefect's run logs and tracebacks.")] = False,
    full: Annotated[bool, typer.Option(
        "--full", help="Rebuild the warehouse from every staged file instead of from the published one (same rows).")] = False,
) -> None:
    """Ingest, validate, model, check and publish the warehouse."""
    if verbose:
        os.environ["PREFECT_LOGGING_LEVEL"] = "INFO"
        os.environ[console_logs.VERBOSE_ENV] = "1"
    from provider_eval import gc_pause

    with gc_pause.importing():  # ~1 s of cyclic collections over what these imports create
        from flows.ephemeral_api import start_ephemeral_api

        # Prefect's temporary server comes up (its own process) while the flow's modules and dbt import.
        api_started = start_ephemeral_api()
        from flows.refresh import refresh as refresh_flow
        from flows.task_runners import make_task_runner
        from provider_eval import progress, sql_layer

        sql_layer.import_dbt()
    api_started()  # before a Dask or Ray runner hands the server's address to its workers
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
                full=full, return_state=True)
        finally:
            stop_listening()
    if not state.is_completed():
        unchanged = "" if "stays published" in (state.message or "") else \
            " The previously published warehouse (if any) is unchanged."
        # A malformed sources.yaml / workloads.yaml is the user's to fix (2), not a failed run (5).
        code = ExitCode.USAGE if isinstance(_state_error(state), ConfigError) else ExitCode.FAILED
        fail(f"refresh failed: {console_logs.one_line(state.message or '')}{unchanged}", code)
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
        _, rejected = query(warehouse_path, REJECTED_FILES_SQL)
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
