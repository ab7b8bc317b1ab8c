"""`provider-eval sql`: ad-hoc SQL on the published warehouse, read-only."""
from typing import Annotated

import duckdb
import typer

from provider_eval import output
from provider_eval.cli import shared
from provider_eval.cli.shared import Format, FormatOpt, WarehouseOpt, fail
from provider_eval.exit_codes import ExitCode


def sql(
    query: Annotated[str, typer.Argument(help="SQL to run against the published warehouse (read-only).")],
    warehouse_path: WarehouseOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Run ad-hoc SQL on the published warehouse, read-only: it can read the warehouse and write no file."""
    try:
        cols, rows = shared.query(warehouse_path, query)  # the parameter `query` names the argument in --help
    except duckdb.Error as exc:
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if isinstance(exc, duckdb.PermissionException) or "locked" in message or "read-only" in message:
            message += (" (provider-eval sql is read-only: it reads the published warehouse only; no file access, "
                        "attach, extensions or settings)")
        fail(message, ExitCode.USAGE)
    output.render(cols, rows, fmt.value)
