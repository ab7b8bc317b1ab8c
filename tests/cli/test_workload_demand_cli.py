"""`rank` and `explain` for the bundled deadline and sustained-demand workloads (real bundled data)."""
import json
from decimal import Decimal

from typer.testing import CliRunner

from provider_eval.cli import app


def _run(*args):
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def test_sustained_rank_shows_the_month_and_where_monthly_beats_on_demand(sample_warehouse):
    wh = str(sample_warehouse)
    table = _run("rank", "--workload", "llama2-70b-fp8-six-months", "--warehouse", wh)
    assert "$ / month" in table and "sustained for 6 month(s)" in table
    rows = {r["config_id"]: r for r in json.loads(_run("rank", "--workload", "llama2-70b-fp8-six-months",
                                                       "--warehouse", wh, "--format", "json"))}
    monthly, hourly = rows["vultr/MI300X/8/monthly"], rows["vultr/MI300X/8/on_demand"]
    # 60e9 tok / 84,653,280 tok/h (MLPerf 23,514.8 tok/s) = 708.773482 h a month: one node, rented 6 months
    # at Vultr's stated $11,773.44 a month; it beats Vultr's $17.52/node-h on-demand above
    # 11,773.44 / (17.52 × 730) = 0.9205 utilisation, and the node is busy 708.773482 / 730 = 0.9709.
    assert (Decimal(str(monthly["cost_per_month_usd"])), monthly["nodes_rented"]) == (Decimal("11773.44"), 1)
    assert Decimal(str(monthly["break_even_utilisation"])) == Decimal("0.9205")
    assert Decimal(str(monthly["node_utilisation"])) == Decimal("0.9709")
    # On-demand pays busy hours: 6 × 708.773482 = 4,252.64 h → 4,253 h × $17.52 = $74,512.56 ($12,418.76 a month).
    assert Decimal(str(hourly["cost_per_month_usd"])) == Decimal("12418.76") and hourly["rank"] > monthly["rank"]
    explained = _run("explain", "llama2-70b-fp8-six-months", "vultr/MI300X/8/monthly", "--warehouse", wh)
    assert "always-on: 1 node(s) paid for the whole period, 97.09 % of their hours busy" in explained
    assert "above 92.05 % utilisation" in explained


def test_deadline_rank_shows_hours_needed(sample_warehouse):
    wh = str(sample_warehouse)
    rows = json.loads(_run("rank", "--workload", "llama2-70b-fp8-by-deadline", "--warehouse", wh, "--format", "json"))
    vultr = next(r for r in rows if r["config_id"] == "vultr/MI300X/8/on_demand")
    # 1e9 / 84,653,280 tok/h = 11.812891 h ≤ 12 h on one node: 12 h billed × $17.52 = $210.24.
    assert (vultr["node_count"], Decimal(str(vultr["hours_needed"])), Decimal(str(vultr["total_cost_usd"]))) == (
        1, Decimal("11.812891"), Decimal("210.24"))
    assert "done within 12 h" in _run("rank", "--workload", "llama2-70b-fp8-by-deadline", "--warehouse", wh)
