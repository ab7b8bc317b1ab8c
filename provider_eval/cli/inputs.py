"""`provider-eval inputs`: each declared source's files, their lifecycle state and row counts."""
from typing import Annotated

import duckdb
import typer

from provider_eval import output, warehouse
from provider_eval.cli.shared import WarehouseOpt

COLUMNS = ["source_name", "original_path", "version", "state", "rows_in", "rows_accepted", "rows_quarantined",
           "first_seen_at", "last_seen_at", "reason"]
HEADERS = {"source_name": "source", "original_path": "file", "version": "v", "rows_in": "rows in",
           "rows_accepted": "accepted", "rows_quarantined": "quarantined", "first_seen_at": "first seen",
           "last_seen_at": "last seen", "reason": "why rejected"}


def inputs(
    source: Annotated[str | None, typer.Option("--source", "-s", help="Only this source (its name in sources.yaml).")] = None,
    warehouse_path: WarehouseOpt = None,
    fmt: Annotated[str, typer.Option("--format", "-f", help="Output format: table, json or csv.")] = "table",
) -> None:
    """Each source's files: current / superseded / withdrawn / rejected, rows in / accepted / quarantined, first and last seen."""
    if fmt not in ("table", "json", "csv"):
        raise typer.BadParameter(f"{fmt!r} is not one of table, json, csv", param_hint="--format")
    sql = (f"select {', '.join(COLUMNS)} from input_files where ? is null or source_name = ? "
           "order by source_name, original_path, version nulls last, first_seen_at")
    try:
        with warehouse.connect_published(warehouse_path) as con:
            rows = con.execute(sql, [source, source]).fetchall()
    except duckdb.CatalogException:
        raise typer.BadParameter("this warehouse has no input_files table; run `provider-eval refresh`",
                                 param_hint="--warehouse") from None
    if source is not None and not rows:
        raise typer.BadParameter(f"no files for source {source!r} in {warehouse_path}", param_hint="--source")
    output.render(COLUMNS, rows, fmt, title="input files" if fmt == "table" else None, headers=HEADERS)
