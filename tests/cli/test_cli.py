"""CLI behaviour scripts rely on: read-only SQL, output formats, exit codes, clear errors."""
import csv
import io
import json
import os
import socket
import subprocess
import sys

import pytest

from provider_eval.exit_codes import ExitCode
from provider_eval.paths import PROJECT_ROOT


def cli(*args, env=None, timeout=300):
    return subprocess.run([sys.executable, "-m", "provider_eval", *args], capture_output=True, text=True,
                          env=env, timeout=timeout, cwd=PROJECT_ROOT)


def test_sql_is_read_only(sample_warehouse):
    result = cli("sql", "create table sneaky as select 1", "--warehouse", str(sample_warehouse))
    assert result.returncode == ExitCode.USAGE
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
    assert result.returncode == ExitCode.FAILED
    assert len(result.stderr.strip().splitlines()) == 1
    assert "run `provider-eval refresh` first" in result.stderr and "Traceback" not in result.stderr


def test_usage_errors_exit_2(sample_warehouse):
    assert cli("rank", "--format", "xml", "-w", str(sample_warehouse)).returncode == 2
    assert cli("no-such-command").returncode == 2


def test_explain_lists_excluded_configurations_with_reasons(sample_warehouse):
    rows = json.loads(cli("explain", "seed-000-same-task", "-w", str(sample_warehouse), "-f", "json").stdout)
    excluded = [r for r in rows if r["status"] == "excluded"]
    assert excluded and all(r["exclusion_reasons"][0] == "NO_BENCHMARK" for r in excluded)
    # Requests for quotation (no price yet) are not costed at all.
    assert not [r for r in rows if r["offer_id"].startswith(("cherry", "vastai-rfq", "servermania"))]
    one = cli("explain", "seed-000-same-task", "--offer", "seed-000-mi325x-server", "-w", str(sample_warehouse))
    assert "compute_cost_usd" in one.stdout and "19.25" in one.stdout


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again when the block ends: nothing listens there


def test_a_dead_prefect_api_is_one_line_and_exit_5(tmp_path):
    env = {**os.environ, "PREFECT_API_URL": f"http://127.0.0.1:{_closed_port()}/api"}
    done = cli("refresh", "--warehouse", str(tmp_path / "w.duckdb"), env=env)
    assert done.returncode == ExitCode.FAILED, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: cannot reach the Prefect API at http://127.0.0.1:") and "PREFECT_API_URL" in lines[0]
    assert not (tmp_path / "w.duckdb").exists()


def test_a_config_error_is_one_line_and_exit_2(tmp_path):
    sources = tmp_path / "sources.yaml"
    sources.write_text("sources:\n  - name: ../../x\n    kind: quotes\n    format: quote-csv\n    path: q.csv\n")
    done = cli("refresh", "--sources", str(sources), "--warehouse", str(tmp_path / "w.duckdb"))
    assert done.returncode == ExitCode.USAGE, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "line 2: key 'name'" in done.stderr, done.stderr


QUOTE_HEADER = "provider,offer_id,gpu_model,gpus_per_node,price,currency,price_unit,price_scope,billing_model,observed_at\n"


@pytest.fixture(scope="module")
def one_rejected_file(tmp_path_factory):
    """Sources where one quote file loads and another (no header at all) is rejected whole."""
    folder = tmp_path_factory.mktemp("rejected")
    (folder / "good.csv").write_text(QUOTE_HEADER + "acme,acme-mi300x-1,MI300X,1,2.10,USD,hour,per_gpu,on_demand,"
                                     "2026-01-15T00:00:00Z\n")
    (folder / "empty.csv").write_text("")
    sources = folder / "sources.yaml"
    sources.write_text("sources:\n"
                       "  - {name: good, kind: quotes, format: quote-csv, path: good.csv}\n"
                       "  - {name: broken, kind: quotes, format: quote-csv, path: empty.csv}\n")
    return folder, sources


def test_a_rejected_file_publishes_and_exits_4_naming_it(one_rejected_file):
    folder, sources = one_rejected_file
    warehouse = folder / "w4" / "provider_eval.duckdb"
    done = cli("refresh", "--sources", str(sources), "--warehouse", str(warehouse))
    assert done.returncode == ExitCode.PARTIAL, done.stderr
    assert warehouse.exists() and "published" in done.stderr
    rejected = [line for line in done.stderr.splitlines() if line.strip().startswith("rejected ")]
    assert len(rejected) == 1 and "empty.csv (source broken): EMPTY" in rejected[0], done.stderr
    assert "Traceback" not in done.stderr


def test_allow_rejected_exits_0(one_rejected_file):
    folder, sources = one_rejected_file
    done = cli("refresh", "--sources", str(sources), "--warehouse", str(folder / "w0" / "provider_eval.duckdb"),
               "--allow-rejected")
    assert done.returncode == ExitCode.OK, done.stderr
    assert "empty.csv (source broken): EMPTY" in done.stderr  # still said, only the exit code changes


@pytest.mark.parametrize("command", ["refresh", "rank", "explain", "sql", "check-fit", "check-compat",
                                     "validate-host", "report"])
def test_every_commands_help_shows_the_exit_codes(command):
    done = cli(command, "--help", env={**os.environ, "COLUMNS": "200"})
    assert done.returncode == 0
    for code in ExitCode:
        assert f"  {int(code)}  " in done.stdout, done.stdout


def test_table_output_never_carries_terminal_escapes(sample_warehouse):
    # Warehouse text comes from vendors' files: in a table it is shown, never obeyed by the terminal.
    out = cli("sql", "select chr(27) || '[2J' || chr(8238) || 'x' || chr(155) as t", "-w", str(sample_warehouse)).stdout
    assert "\x1b" not in out and "\u202e" not in out and "\x9b" not in out and "[2J" in out
