"""`rank` as a table: the cheapest rows only (rich lays out every cell), data never read as markup."""
from typer.testing import CliRunner

from provider_eval import output
from provider_eval.cli import app


def test_table_cells_are_printed_as_written_not_as_markup(capsys):
    output.render(["provider"], [("[bold]acme[/bold] :smile:",)], "table")
    assert "[bold]acme[/bold] :smile:" in capsys.readouterr().out


def test_rank_table_shows_the_cheapest_rows_and_says_how_to_see_all(sample_warehouse, monkeypatch):
    monkeypatch.setattr(output, "TABLE_ROWS_SHOWN", 1)
    runner = CliRunner()
    args = ["rank", "--workload", "seed-000-same-task", "--warehouse", str(sample_warehouse)]
    shown = runner.invoke(app, args)
    assert shown.exit_code == 0, shown.output
    assert "MI350X" in shown.output and "MI325X" not in shown.output
    assert "2 more ranked configuration(s) not shown — see all with --top 3 or --format csv|json" in shown.output
    everything = runner.invoke(app, args + ["--top", "3"])
    assert "MI325X" in everything.output and "MI300X" in everything.output and "not shown" not in everything.output


def _rank(warehouse, *args):
    result = CliRunner().invoke(app, ["rank", "--warehouse", str(warehouse), *args])
    assert result.exit_code == 0, result.output
    return result.output


def _rank_json(warehouse, *args):
    import json

    return json.loads(_rank(warehouse, "--format", "json", *args))


def test_rank_fits_a_100_column_terminal_and_config_ids_never_wrap(sample_warehouse, monkeypatch):
    from rich.console import Console

    # A 100-column terminal: rich reads $COLUMNS on a tty; here the console is given the width.
    monkeypatch.setattr(output, "stdout_console", lambda: Console(width=100))
    out = _rank(sample_warehouse, "--workload", "llama2-70b-fp8-offline-tokens")
    table = [line for line in out.splitlines() if line[:1] in "┏┃┡│└"]
    assert table and max(len(line) for line in table) <= 100
    ids = {r["config_id"] for r in _rank_json(sample_warehouse, "--workload", "llama2-70b-fp8-offline-tokens")}
    assert "amd-developer-cloud/MI300X/8/on_demand" in ids
    for config_id in ids:  # each id whole on one line of the table
        assert any(config_id in line for line in table), config_id
    # The flags that matter are on the row: spot, the quote's age, not validated.
    spot = next(line for line in table if "vultr/MI300X/8/spot" in line)
    assert "spot," in spot.split("│")[-2] and "d old" in spot
    monkeypatch.undo()  # wide columns are for a wide terminal (a pipe: 200 columns)
    wide = _rank(sample_warehouse, "--workload", "seed-000-same-task", "--wide")
    assert "seed-000-mi350x-server" in wide and "AMD" in wide


def test_rank_rows_carry_their_risk_flags_notes_and_warnings(sample_warehouse):
    rows = {r["config_id"]: r for r in _rank_json(sample_warehouse, "--workload", "llama2-70b-fp8-offline-tokens")}
    spot = rows["vultr/MI300X/8/spot"]
    # Vultr's catalog is dated 2025-01-08 (sources.yaml); the sample refresh runs on the test's day.
    assert spot["is_interruptible"] and spot["risk_flags"][0] == "spot" and "unvalidated" in spot["risk_flags"]
    assert any(n.startswith("SPOT_INTERRUPTION_RISK") for n in spot["risk_notes"])
    assert spot["risk_flags"][1] == f"{spot['quote_age_days']}d old" and spot["quote_age_days"] > 365
    assert spot["vendor"] == "AMD" and spot["warnings"] == []
    seed = {r["config_id"]: r for r in _rank_json(sample_warehouse, "--workload", "seed-000-same-task")}
    mi350x = seed["seed-000-example/MI350X/1/on_demand"]
    # Undated (the seed states no date): age unknown, and said so in flags, warnings and notes.
    assert mi350x["quote_age_days"] is None and "undated" in mi350x["risk_flags"]
    assert mi350x["warnings"] == ["OBSERVED_AT_UNKNOWN"]
    assert any(n.startswith("OBSERVED_AT_UNKNOWN") for n in mi350x["risk_notes"])
    csv_out = _rank(sample_warehouse, "--workload", "seed-000-same-task", "--format", "csv")
    header = csv_out.splitlines()[0].split(",")
    assert {"risk_notes", "warnings", "risk_flags", "vendor", "quote_age_days"} <= set(header)


def test_rank_filters(sample_warehouse):
    w = ["--workload", "llama2-70b-fp8-offline-tokens"]
    every = _rank_json(sample_warehouse, *w)
    # 8 AMD 8 x MI300X configurations (RunPod's undated one too) and, since issue 22, NVIDIA's 8 x H200
    # baseline (Vast.ai, undated): undated real catalogs are ranked flagged under one rule.
    assert len(every) == 9 and [r["rank"] for r in every] == list(range(1, 10))
    no_spot = _rank_json(sample_warehouse, *w, "--no-spot")
    assert [r["config_id"] for r in no_spot] == [r["config_id"] for r in every if r["billing_model"] != "spot"]
    assert {r["billing_model"] for r in _rank_json(sample_warehouse, *w, "--billing", "monthly")} == {"monthly"}
    assert {r["provider"] for r in _rank_json(sample_warehouse, *w, "--provider", "Vultr")} == {"vultr"}
    # An alias resolves to the catalog GPU; the seed's three GPUs filter to one.
    seed = _rank_json(sample_warehouse, "--workload", "seed-000-same-task", "--gpu", "mi325x")
    assert [(r["gpu_model"], r["rank"]) for r in seed] == [("MI325X", 2)]
    # No bundled offer has a passing host validation: --validated-only leaves nothing.
    assert _rank_json(sample_warehouse, *w, "--validated-only") == []
    # --max-quote-age keeps dated quotes no older than DAYS; an undated one's age is unknown: out.
    ages = sorted({r["quote_age_days"] for r in every if r["quote_age_days"] is not None})
    assert [r["quote_age_days"] for r in every if r["vendor"] == "NVIDIA"] == [None]
    assert [r["config_id"] for r in every if r["quote_age_days"] is None] == ["vast.ai/H200/8/on_demand",
                                                                         "runpod/MI300X/8/on_demand"]
    kept = _rank_json(sample_warehouse, *w, "--max-quote-age", str(ages[0]))
    assert kept and {r["quote_age_days"] for r in kept} == {ages[0]}
    undated_out = {r["config_id"] for r in _rank_json(sample_warehouse, *w, "--max-quote-age", str(ages[-1]))}
    assert not undated_out & {"vast.ai/H200/8/on_demand", "runpod/MI300X/8/on_demand"}
    assert _rank_json(sample_warehouse, "--workload", "seed-000-same-task", "--max-quote-age", "100000") == []
    assert {r["vendor"] for r in _rank_json(sample_warehouse, *w, "--vendor", "amd")} == {"AMD"}
    assert [r["config_id"] for r in _rank_json(sample_warehouse, *w, "--vendor", "nvidia")] == ["vast.ai/H200/8/on_demand"]
    # The NVIDIA baseline has no monthly offer: nothing passes both filters.
    assert _rank_json(sample_warehouse, *w, "--vendor", "nvidia", "--billing", "monthly") == []
    table = _rank(sample_warehouse, *w, "--vendor", "nvidia", "--billing", "monthly")
    assert "no ranked configuration passes the filters" in table
    unknown = CliRunner().invoke(app, ["rank", "--warehouse", str(sample_warehouse), "--gpu", "Z9000"])
    assert unknown.exit_code == 2 and "unknown GPU 'Z9000'" in unknown.output


def test_excluded_summary_is_on_stdout_and_says_a_configuration_may_have_several_reasons(sample_warehouse):
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "provider_eval", "rank", "--workload", "llama2-70b-fp8-interactive",
                          "-w", str(sample_warehouse)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    line = next(line for line in out.stdout.splitlines() if "excluded" in line)
    n = int(line.split()[0])
    reasons = dict((r.rsplit(" ×", 1)[0], int(r.rsplit(" ×", 1)[1]))
                   for r in line.split("several): ")[1].split(" — ")[0].split(", "))
    assert line.startswith(f"  {n} configurations excluded; reasons (a configuration may have several): ")
    # More reasons than configurations: the per-reason counts overlap, the total does not.
    assert sum(reasons.values()) > n and max(reasons.values()) <= n
    assert "excluded" not in out.stderr


def test_rank_table_fetches_the_first_rows_of_each_workload(sample_warehouse, monkeypatch):
    """The table's query keeps the cheapest TABLE_ROWS_SHOWN per workload (not overall) and counts
    the rest: every workload ranked in the export still gets its cheapest row and its count."""
    import json

    monkeypatch.setattr(output, "TABLE_ROWS_SHOWN", 1)
    runner = CliRunner()
    args = ["rank", "--warehouse", str(sample_warehouse)]
    ranked = json.loads(runner.invoke(app, args + ["--format", "json"]).output)
    per_workload = {}
    for row in ranked:
        per_workload.setdefault(row["workload_id"], []).append(row)
    assert len(per_workload) >= 2
    shown = runner.invoke(app, args)
    assert shown.exit_code == 0, shown.output
    for workload_id, rows in per_workload.items():
        assert f"{workload_id}: cost" in shown.output
        if len(rows) > 1:
            assert f"{len(rows) - 1:,} more ranked configuration(s) not shown — see all with --top {len(rows)}" in shown.output
