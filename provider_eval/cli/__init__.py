"""The provider-eval command line: one module per command, registered here in --help order."""
import os

# Quiet, readable Prefect by default: no telemetry (its heartbeat races the ephemeral server's
# SQLite and prints tracebacks), and only warnings unless --verbose. Set here, before any command
# module is imported, because Prefect reads these once, when it is first imported.
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("DO_NOT_TRACK", "1")
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
# Prefect waits 20 s for its temporary local server to start; a busy 2-core machine can need more,
# and a refresh that gives up there has done nothing wrong. 90 s, still overridable.
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "90")

import sys  # noqa: E402

import typer  # noqa: E402

from provider_eval import console_logs, exit_codes, output, quiet_exit  # noqa: E402
from provider_eval.cli import (check_compat, check_fit, explain, inputs, rank, refresh, report, sql,  # noqa: E402
                               validate_host)
from provider_eval.cli.shared import err  # noqa: E402
from provider_eval.errors import ProviderEvalError  # noqa: E402
from provider_eval.exit_codes import ExitCode  # noqa: E402

app = typer.Typer(add_completion=False, no_args_is_help=True, epilog=exit_codes.HELP,
                  help="Rank rentable accelerator configurations by cost per completed workload.")
app.command()(refresh.refresh)
app.command()(rank.rank)
app.command()(explain.explain)
app.command()(sql.sql)
app.command("check-fit")(check_fit.check_fit)
app.command("check-compat")(check_compat.check_compat)
app.command("validate-host")(validate_host.validate_host)
app.command()(report.report)
app.command("inputs")(inputs.inputs)  # docs/inputs.md


def _show_exit_codes() -> None:
    """Every command's --help ends with the one exit-code table (commands added later get it too)."""
    for command in app.registered_commands:
        command.epilog = command.epilog or exit_codes.HELP


def main() -> None:
    """Console entry point: every failure is one line on stderr (tracebacks with --verbose) and a documented code."""
    # Before any command imports Prefect, so the quiet teardown runs after Prefect's atexit work (quiet_exit.py).
    quiet_exit.install()
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
