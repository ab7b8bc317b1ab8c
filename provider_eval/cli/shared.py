"""What every command shares: the stderr console, the common options, failing in one line, read-only queries."""
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from provider_eval import console_logs, output, warehouse
from provider_eval.exit_codes import ExitCode
from provider_eval.paths import warehouse_or_default

err = Console(stderr=True, soft_wrap=True)


class Format(str, Enum):
    table = "table"
    json = "json"
    csv = "csv"


WarehouseOpt = Annotated[Path, typer.Option("--warehouse", "-w", callback=warehouse_or_default, help=(
    "DuckDB warehouse file (default: $PROVIDER_EVAL_WAREHOUSE, else warehouse/provider_eval.duckdb; "
    "docs/configuration.md)."))]
FormatOpt = Annotated[Format, typer.Option("--format", "-f", help="Output format.")]


def fail(message: str, code: int = ExitCode.FAILED) -> None:
    """One red line on stderr, then exit with the documented code."""
    err.print(f"[bold red]error:[/] {console_logs.escape(output.printable(message))}", highlight=False)
    raise typer.Exit(int(code))


def query(warehouse_path: Path, sql: str, params: list | None = None) -> tuple[list[str], list[tuple]]:
    """Column names and rows of one query on the published warehouse (read-only)."""
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


def cost_column_for(unit: str | None) -> tuple[str, dict[str, str]]:
    """The cost column to show for a workload's unit, with headers naming the unit (tokens: per million)."""
    if unit in PER_MILLION_UNITS:
        return "cost_per_million_units_usd", {**HEADERS, "cost_per_million_units_usd":
                                              f"$ per million {unit.replace('_', ' ')}"}
    return "cost_per_unit_usd", {**HEADERS, "cost_per_unit_usd": f"$ per {unit.removesuffix('s') if unit else 'unit'}"}
