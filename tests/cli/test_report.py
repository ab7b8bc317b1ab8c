"""The HTML report: written by the CLI, self-contained, and rendered by a real headless Chromium."""
import re
import shutil
import struct
import subprocess
import sys
import urllib.parse
import zlib
from pathlib import Path

import duckdb
import pytest

from provider_eval import report
from tests.conftest import query

CHROMIUM = "/usr/bin/chromium"
ROOT = Path(__file__).resolve().parents[2]


def _write_report(warehouse: Path, out: Path) -> str:
    """Run the real command line, as a user would."""
    done = subprocess.run([sys.executable, "-m", "provider_eval", "report", "--warehouse", str(warehouse),
                           "--out", str(out)], capture_output=True, text=True, timeout=120,
                          cwd=ROOT, env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(out)
    return out.read_text(encoding="utf-8")


def _chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    """Headless Chromium with a private profile, no network chatter, console messages on stderr."""
    assert Path(CHROMIUM).exists(), "chromium is missing: `make test` installs it (apt package chromium)"
    return subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
         f"--user-data-dir={tmp_path / 'chromium-profile'}", "--enable-logging=stderr", "--v=0", *args],
        capture_output=True, text=True, timeout=120)


def _png_size_and_colours(png: bytes) -> tuple[int, int, int]:
    """Width, height and a count of distinct byte values in the image data (blank pages have few)."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", png[16:24])
    data, pos = b"", 8
    while pos < len(png):
        length = struct.unpack(">I", png[pos:pos + 4])[0]
        kind = png[pos + 4:pos + 8]
        if kind == b"IDAT":
            data += png[pos + 8:pos + 8 + length]
        pos += 12 + length
    return width, height, len(set(zlib.decompress(data)))


@pytest.fixture(scope="module")
def sample_report(sample_warehouse, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("report") / "report.html"
    _write_report(sample_warehouse, out)
    return out


def test_report_is_one_self_contained_file(sample_report, sample_warehouse):
    page = sample_report.read_text(encoding="utf-8")
    assert "<script" not in page.lower()
    # Nothing fetched: no external src/href, no CSS url() or @import (SVG namespaces are not fetches).
    assert not re.search(r'(src|href)\s*=\s*"(https?:)?//', page)
    assert "url(" not in page and "@import" not in page
    # The one link out: the dbt docs site written beside the warehouse (tests/sql/test_sql_layer_docs.py).
    docs = urllib.parse.unquote(re.search(r'<a href="([^"]+)" id="sql-docs">', page).group(1))
    assert (sample_report.parent / docs).resolve() == (sample_warehouse.parent / "dbt_docs" / "index.html").resolve()
    assert (sample_report.parent / docs).is_file()
    # cost bars + cost vs time for each of the five ranked workloads (seed 000, Llama-2-70B offline and
    # server, and since issue 22 its six-month and by-deadline forms), the memory-fit heatmap of the
    # bundled model workloads, 5 GPU models' prices (MI300X, MI325X, MI350X; NVIDIA H200 and B200
    # from the SkyPilot Vast.ai catalog since issue 22)
    assert page.count("<svg") == 16
    assert "No data yet: the memory_fit mart is empty." not in page
    assert "No data yet: no host has been validated" in page
    assert "No per-request latency data yet" in page
    # The excluded configurations are listed with their reasons.
    excluded = query(sample_warehouse, """select count(*) from workload_costs
                                          where list_contains(exclusion_reasons, 'NO_BENCHMARK')""")[0][0]
    assert excluded > 0 and page.count("NO_BENCHMARK") == excluded
    assert page.count("SLO_NOT_MET") == query(sample_warehouse, """select count(*) from workload_costs
                                                                 where list_contains(exclusion_reasons, 'SLO_NOT_MET')""")[0][0]


def test_report_covers_sensitivity_and_labelled_estimates(sample_report, sample_warehouse):
    page = sample_report.read_text(encoding="utf-8")
    ranked_workloads = query(sample_warehouse, "select count(distinct workload_id) from ranking_sensitivity")[0][0]
    assert page.count("<h4>Sensitivity (") == ranked_workloads
    seed = page[page.index('id="w-seed-000-same-task"'):]
    # The seed's break-even prices (MI350X keeps the lead up to $4.8125/GPU-h; MI325X wins below $2.2857).
    assert "4.8125" in seed and "2.2857" in seed and "-16.88" in seed
    # Estimates: apart from the ranking, titled as lower-confidence, one row per estimate with its basis.
    n_estimates = query(sample_warehouse, "select count(*) from estimate_rankings")[0][0]
    assert n_estimates > 0 and page.count("Lower-confidence ESTIMATES") == query(
        sample_warehouse, "select count(distinct workload_id) from estimate_rankings")[0][0]
    assert page.count("measured at seed-000-example (another provider") == n_estimates
    # An SLO exclusion shows the latencies that missed.
    start = page.index('id="w-llama2-70b-fp8-interactive"')
    interactive = page[start:page.find('<h3 id="w-', start + 1)]
    assert "ttft_p99_ms 1604.171 ms &gt; SLO 450.0 ms" in interactive
    # Token workloads are charted per million tokens, not as tiny per-token numbers.
    assert "USD per million output tokens" in page


def test_report_renders_in_headless_chromium(sample_report, tmp_path):
    dom = _chromium(tmp_path, "--dump-dom", sample_report.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert len(re.findall(r"<svg\b", dom.stdout)) == 16
    assert len(re.findall(r"<(rect|path|text)\b", dom.stdout)) > 100  # the charts drew marks
    assert "provider-eval report" in dom.stdout and "Price history per GPU model" in dom.stdout
    # Chromium reports page errors (script, resource loads) on its log as CONSOLE or Uncaught lines.
    assert not re.search(r"CONSOLE|Uncaught|net::ERR_", dom.stderr), dom.stderr[-2000:]

    shot = tmp_path / "report.png"
    done = _chromium(tmp_path, "--window-size=1200,1500", f"--screenshot={shot}", sample_report.as_uri())
    assert done.returncode == 0 and shot.exists(), done.stderr[-2000:]
    width, height, colours = _png_size_and_colours(shot.read_bytes())
    assert (width, height) == (1200, 1500)
    assert colours > 50, "the screenshot looks blank"


@pytest.fixture
def filled_warehouse(sample_warehouse, tmp_path) -> Path:
    """The sample warehouse with the marts other stages fill later: memory fit, validations, latency."""
    copy = tmp_path / "filled.duckdb"
    shutil.copy(sample_warehouse, copy)
    with duckdb.connect(str(copy)) as con:
        # By name: other stages add columns to these marts; the report needs only the SPEC's.
        con.execute("""insert into marts.memory_fit by name
            select * from (values
                ('seed-000-same-task', 'MI300X', 1, 100, 200, true, 1),
                ('seed-000-same-task', 'RX 7900 XTX', 1, 100, 24, false, null),
                ('seed-000-same-task', 'RX 7900 XTX', 8, 20, 24, true, 8))
            as t(workload_id, gpu_model, gpu_count, required_bytes_per_gpu, available_bytes_per_gpu, fits, min_gpus)""")
        con.execute("""insert into marts.hardware_validations by name
            select * from (values
                ('v1', 'host-a', 'hotaisle-mi300x-1', 'fail', ['ROCM_SMOKE_FAILED'], '2026-01-01T00:00:00Z'::timestamptz, false),
                ('v2', 'host-a', 'hotaisle-mi300x-1', 'pass', ['DRIVER_NOTE', 'KERNEL_NOTE'], '2026-02-01T00:00:00Z'::timestamptz, true))
            as t(validation_id, host, offer_id, verdict, reasons, validated_at, is_latest_for_offer)""")
        # Median latencies: MI350X 500 ms, MI325X 600 ms (dearer and slower: dominated), MI300X 300 ms.
        con.execute("""insert into marts.benchmark_requests by name
            select run_id, i as request_index, 10 as input_tokens, 10 as output_tokens, 1.0 as ttft_ms,
                   latency_ms, null as error, 'test' as source_name
            from (values ('seed-000-mi350x', 500.0), ('seed-000-mi325x', 600.0), ('seed-000-mi300x', 300.0))
                 as t(run_id, latency_ms), range(3) as r(i)""")
    return copy


def test_pareto_front_from_request_latency(filled_warehouse):
    with duckdb.connect(str(filled_warehouse), read_only=True) as con:
        rows = con.execute(report.COST_VS_TIME_SQL, ["seed-000-same-task"]).fetchall()
        cols = [d[0] for d in con.description]
    points = {r[cols.index("offer_id")]: (r[cols.index("x_value")], r[cols.index("front")]) for r in rows}
    assert points == {"seed-000-mi300x-server": (300.0, "on the Pareto front"),
                      "seed-000-mi350x-server": (500.0, "on the Pareto front"),
                      "seed-000-mi325x-server": (600.0, "dominated")}


def test_report_renders_filled_marts(filled_warehouse, tmp_path):
    page = _write_report(filled_warehouse, tmp_path / "filled.html")
    assert page.count("<svg") == 16  # the memory-fit heatmap is drawn from the bundled workloads' rows too
    assert "No data yet: the memory_fit mart is empty." not in page
    # The seed workload has per-request rows now; the four MLPerf-backed workloads (two since issue 22's
    # six-month and by-deadline forms) still have none.
    assert "median request latency (ms)" in page and page.count("No per-request latency data yet") == 4
    # Only the latest validation of a host × offer is shown.
    validations = page[page.index('id="validations"'):page.index('id="freshness"')]
    assert "pass" in validations and "ROCM_SMOKE_FAILED" not in validations
    assert "DRIVER_NOTE; KERNEL_NOTE" in validations
    for text in ("fits on 1 GPU", "does not fit", "min 8 GPU"):
        assert text in page
    dom = _chromium(tmp_path, "--dump-dom", (tmp_path / "filled.html").as_uri())
    assert len(re.findall(r"<svg\b", dom.stdout)) == 16


def test_report_of_an_empty_warehouse_says_so(sample_warehouse, tmp_path):
    copy = tmp_path / "empty.duckdb"
    shutil.copy(sample_warehouse, copy)
    with duckdb.connect(str(copy)) as con:
        con.execute("delete from intermediate.int_workload_ranks; delete from intermediate.int_workload_costs; delete from marts.offers; delete from marts.offer_history;"
                    " delete from marts.memory_fit")
    page = report.write_report(copy, tmp_path / "empty.html").read_text(encoding="utf-8")
    assert "<svg" not in page
    for text in ("No workloads in the warehouse.", "No data yet: the memory_fit mart is empty.",
                 "No data yet: offer_history has no priced observations.", "No offers."):
        assert text in page
