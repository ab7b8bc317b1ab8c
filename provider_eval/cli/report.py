"""`provider-eval report`: one self-contained HTML report."""
from pathlib import Path
from typing import Annotated

import typer

from provider_eval.cli.shared import WarehouseOpt, err


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
