"""The NVIDIA baseline on real bundled data: MLPerf v4.1 NVIDIA 8 × H200 ranked against AMD 8 × MI300X."""
import json
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import duckdb

from flows.ingest.adapters import ADAPTERS
from flows.ingest.adapters.mlperf_summary import nvidia_stack, software
from provider_eval.report import _vendor_baseline
from tests.adapter_context import file_context
from tests.conftest import query

ROOT = Path(__file__).resolve().parents[2]
NVIDIA = ROOT / "data" / "samples" / "benchmarks" / "mlperf_v4.1" / "closed" / "NVIDIA"
SUMMARY = NVIDIA / "results" / "H200-SXM-141GBx8_TRT" / "llama2-70b-99" / "{}" / "performance" / "run_1" / "mlperf_log_summary.txt"
SYSTEM_JSON = NVIDIA / "systems" / "H200-SXM-141GBx8_TRT.json"
OFFLINE = "llama2-70b-fp8-offline-tokens"


def cli(*args):
    return subprocess.run([sys.executable, "-m", "provider_eval", *args], capture_output=True, text=True)


def _parse(scenario: str, companions=None) -> dict:
    path = Path(str(SUMMARY).format(scenario))
    ctx = file_context(path, {"model_id": "llama-2-70b", "precision": "fp8"},
                       {str(SYSTEM_JSON): str(SYSTEM_JSON)} if companions is None else companions)
    result = ADAPTERS["mlperf-summary"].parse(ctx)
    assert result.accepted.height == 1, result.quarantined
    return result.accepted.row(0, named=True)


def test_the_nvidia_system_json_gives_gpu_count_engine_cuda_and_driver():
    offline, server = _parse("Offline"), _parse("Server")
    # "NVIDIA H200-SXM-141GB" resolves to the catalog's H200; 8 per node × 1 node.
    assert (offline["gpu_model"], offline["gpu_count"], offline["node_count"]) == ("H200", 8, 1)
    assert (offline["engine"], offline["engine_version"], offline["rocm_version"]) == ("tensorrt", "10.2.0", None)
    assert offline["output_tokens_per_s"] == 31302.7 and server["output_tokens_per_s"] == 29228.22
    assert round(server["ttft_p99_ms"], 6) == 452.744202 and round(server["tpot_p99_ms"], 6) == 146.040006
    meta = json.loads(offline["metadata_json"])
    assert (meta["cuda_version"], meta["gpu_driver_version"]) == ("12.4", "550.54")
    assert meta["other_software_stack"] == "TensorRT 10.2.0, CUDA 12.4, cuDNN 8.9.7, Driver 550.54"


def test_cuda_and_driver_are_only_what_is_stated():
    assert nvidia_stack("TensorRT 10.2.0, CUDA 12.4", "cuDNN 8.9.7, Driver 550.54") == {
        "cuda_version": "12.4", "gpu_driver_version": "550.54"}
    # AMD's system JSON states neither: nothing is inferred ("vllm-a8cff57" is no engine either).
    amd = nvidia_stack("vLLM 0.4.3+rocm614, PyTorch 2.3.0, ROCm 6.1.2", "hipblaslt-8b71e7a, flash-attn-23a2b1c, vllm-a8cff57")
    assert amd == {}
    assert software("vLLM 0.4.3+rocm614, PyTorch 2.3.0, ROCm 6.1.2") == {
        "engine": "vllm", "engine_version": "0.4.3+rocm614", "rocm_version": "6.1.2"}
    assert software("TensorRT-LLM 0.12.0, CUDA 12.4") == {"engine": "tensorrt-llm", "engine_version": "0.12.0"}


def test_bundled_runs_carry_cuda_facts_for_nvidia_only(sample_warehouse):
    rows = query(sample_warehouse, "select gpu_model, scenario, engine, rocm_version, cuda_version, gpu_driver_version "
                 "from benchmark_runs where benchmark_format = 'mlperf-summary' order by gpu_model, scenario")
    assert rows == [
        ("H200", "Offline", "tensorrt", None, "12.4", "550.54"),
        ("H200", "Server", "tensorrt", None, "12.4", "550.54"),
        ("MI300X", "Offline", "vllm", "6.1.2", None, None),
        ("MI300X", "Server", "vllm", "6.1.2", None, None),
        ("MI325X", "Offline", "vllm", "6.4.1", None, None),
        ("MI325X", "Server", "vllm", "6.4.1", None, None),
    ]
    # ROCm checks stay AMD-only: the NVIDIA rows are never judged against ROCm.
    verdicts = query(sample_warehouse, "select distinct compat_verdict from workload_costs where vendor = 'NVIDIA'")
    assert verdicts == [("not_applicable",)]


def test_h200_cost_per_million_tokens_by_hand(sample_warehouse):
    # Offline: 1e9 tokens / (31,302.7 tokens/s × 3600 s/h) = 8.8739 h, billed by the hour → 9 h;
    # Vast.ai's 8 × H200 is $17.88 a node-hour (skypilot_v8_vast_vms.csv), so 9 × 17.88 = $160.92,
    # i.e. $160.92 / 1,000 million tokens = $0.16092 per million. DigitalOcean's 8 × MI300X ($15.92/h):
    # 1e9 / (23,514.8 × 3600) = 11.813 h → 12 h × 15.92 = $191.04.
    hours_needed = Decimal(10**9) / (Decimal("31302.7") * 3600)
    assert round(hours_needed, 4) == Decimal("8.8739")
    (row,) = query(sample_warehouse, "select rank, hours_billed, total_cost_usd, cost_per_unit_usd * 1000000 from rankings "
                   "where workload_id = $1 and config_id = 'vast.ai/H200/8/on_demand'", [OFFLINE])
    assert row[1:] == (Decimal(9), Decimal("160.92"), Decimal("0.16092"))
    (do,) = query(sample_warehouse, "select rank, total_cost_usd from rankings where workload_id = $1 "
                  "and config_id = 'digitalocean/MI300X/8/on_demand'", [OFFLINE])
    assert do[1] == Decimal("191.04") and row[0] < do[0]


def test_rank_vendor_shows_both_vendors_for_every_matched_llama2_workload(sample_warehouse):
    for workload in (OFFLINE, "llama2-70b-fp8-server-slo", "llama2-70b-fp8-six-months", "llama2-70b-fp8-by-deadline"):
        seen = {}
        for vendor in ("amd", "nvidia"):
            out = cli("rank", "--workload", workload, "--vendor", vendor, "--format", "json", "-w", str(sample_warehouse))
            assert out.returncode == 0, out.stderr
            seen[vendor] = {r["vendor"] for r in json.loads(out.stdout)}
        assert seen == {"amd": {"AMD"}, "nvidia": {"NVIDIA"}}, workload
    # Interactive SLOs: the H200 Server run misses them too (TTFT p99 452.7 ms > 450 ms).
    (reasons,) = query(sample_warehouse, "select exclusion_reasons from workload_costs where workload_id = "
                       "'llama2-70b-fp8-interactive' and config_id = 'vast.ai/H200/8/on_demand'")
    assert "SLO_NOT_MET" in reasons[0]
    # An age limit leaves the undated baseline price out.
    out = cli("rank", "--workload", OFFLINE, "--vendor", "nvidia", "--max-quote-age", "730", "--format", "json",
              "-w", str(sample_warehouse))
    assert out.returncode == 0 and json.loads(out.stdout) == []


def test_report_baseline_compares_real_runs(sample_warehouse):
    con = duckdb.connect(str(sample_warehouse), read_only=True)
    section = _vendor_baseline(con, "llama2-70b-fp8-server-slo", "cost_per_unit_usd * 1e6", "$ per million output tokens")
    # Server run 29,228.22 tok/s: 1e9 / (29,228.22 × 3600) = 9.504 h → 10 h × 17.88 = $178.80 → 0.1788;
    # AMD's cheapest is Vultr's spot 8 × MI300X at $206.08 → 0.2061; 0.20608 / 0.1788 = 1.15.
    assert "costs 1.15 × the cheapest NVIDIA one ($ per million output tokens: 0.2061 against 0.1788)" in section
    assert "tensorrt 10.2.0, CUDA 12.4, driver 550.54" in section and "vllm 0.4.3+rocm614, ROCm 6.1.2" in section


def test_readme_amd_vs_nvidia_excerpt_is_what_the_query_prints(sample_warehouse):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("**AMD vs NVIDIA on the same benchmark.**", 1)[1].split("```", 2)[1]
    command, *table = [line.strip() for line in block.strip().splitlines()]
    sql = command.removeprefix('$ provider-eval sql "').removesuffix('"')
    out = cli("sql", sql, "-w", str(sample_warehouse))
    assert out.returncode == 0, out.stderr
    assert [line.strip() for line in out.stdout.splitlines() if line.strip()] == table
