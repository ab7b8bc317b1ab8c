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
