"""CLI behaviour scripts rely on: read-only SQL, output formats, exit codes, clear errors."""
import csv
import io
import json
import subprocess
import sys


def cli(*args):
    return subprocess.run([sys.executable, "-m", "provider_eval", *args], capture_output=True, text=True)


def test_sql_is_read_only(sample_warehouse):
    result = cli("sql", "create table sneaky as select 1", "--warehouse", str(sample_warehouse))
    assert result.returncode == 1
    assert "read-only" in result.stderr.lower() and "Traceback" not in result.stderr


def test_sql_formats(sample_warehouse):
    q = "select offer_id, usd_per_gpu_hour from offers where offer_id = 'seed-000-mi325x-server'"
    as_json = json.loads(cli("sql", q, "-w", str(sample_warehouse), "--format", "json").stdout)
    assert as_json == [{"offer_id": "seed-000-mi325x-server", "usd_per_gpu_hour": 2.75}]
    as_csv = list(csv.reader(io.StringIO(cli("sql", q, "-w", str(sample_warehouse), "-f", "csv").stdout)))
    assert as_csv == [["offer_id", "usd_per_gpu_hour"], ["seed-000-mi325x-server", "2.750000"]]


def test_csv_export_defuses_spreadsheet_formulas(sample_warehouse):
    out = cli("sql", "select '=HYPERLINK(1)' as t, -2.49 as n", "-w", str(sample_warehouse), "-f", "csv").stdout
    assert out.splitlines()[1] == "'=HYPERLINK(1),-2.49"


def test_missing_warehouse_is_a_clear_error(tmp_path):
    result = cli("rank", "--warehouse", str(tmp_path / "none.duckdb"))
    assert result.returncode == 1
    assert "run `provider-eval refresh` first" in result.stderr and "Traceback" not in result.stderr


def test_usage_errors_exit_2(sample_warehouse):
    assert cli("rank", "--format", "xml", "-w", str(sample_warehouse)).returncode == 2
    assert cli("no-such-command").returncode == 2


def test_explain_lists_excluded_configurations_with_reasons(sample_warehouse):
    rows = json.loads(cli("explain", "seed-000-same-task", "-w", str(sample_warehouse), "-f", "json").stdout)
    excluded = [r for r in rows if r["status"] == "excluded"]
    assert excluded and all(r["exclusion_reasons"][0] == "NO_BENCHMARK" for r in excluded)
    # Requests for quotation (no price yet) are not costed at all.
    assert not [r for r in rows if r["provider"] in ("cherry-servers", "vast.ai", "servermania")]
    one = cli("explain", "seed-000-same-task", "--offer", "seed-000-mi325x-server", "-w", str(sample_warehouse))
    assert "compute_cost_usd" in one.stdout and "19.25" in one.stdout
