"""GPU and model names as real files write them → catalog id or reason code (flows/ingest/names.py)."""
import json
import shutil
from pathlib import Path

import polars as pl
import pytest

from flows.ingest import names
from flows.ingest.adapters import fields as f
from tests.conftest import FIXTURES, query, run_refresh, write_sources
from tests.ingest.test_benchmark_adapters import MLPERF_RUN, SYSTEM_JSON, parse

# (name as written, where it is written, expected catalog GPU or reason code)
GPU_NAMES = [
    # MLPerf Inference systems JSON accelerator_model_name
    ("AMD Instinct MI300X-NPS1-SPX-192GB-750W", "MLPerf v4.1 closed/AMD/systems/8xMI300X_2xEPYC-9374F.json", "MI300X"),
    ("AMD Instinct MI300X 192GB HBM3", "MLPerf v5.x AMD systems JSON shape", "MI300X"),
    ("AMD Instinct MI325X", "MLPerf v5.x AMD systems JSON", "MI325X"),
    ("AMD Instinct MI325X 256GB HBM3E", "MLPerf v5.x AMD systems JSON shape", "MI325X"),
    ("AMD Instinct MI325X-OAM-256GB", "MLPerf accelerator name shape (a third-party mapper's test)", "MI325X"),
    ("AMD Instinct MI325X-NPS1-SPX-288GB-1000W", "v4.1 shape with the wrong memory", "VRAM_MISMATCH"),
    ("NVIDIA H200-SXM-141GB", "MLPerf systems JSON (NVIDIA)", "H200"),
    ("NVIDIA H100-SXM-80GB", "MLPerf systems JSON (NVIDIA)", "H100 SXM"),
    ("NVIDIA H100 SXM5 80GB", "MLPerf systems JSON (H100x8-vLLM)", "H100 SXM"),
    ("NVIDIA H100 80GB HBM3", "MLPerf systems JSON; nvidia-smi; torch; RunPod id", "H100 SXM"),
    ("NVIDIA H100", "MLPerf systems JSON (2-node submission)", "GPU_VARIANT_UNKNOWN"),
    # amd-smi / rocm-smi / rocminfo / torch / k8s labeller
    ("AMD Instinct MI300X", "amd-smi market name; rocminfo Marketing Name; torch.cuda.get_device_name", "MI300X"),
    ("MI300X-O", "amd-smi MARKET_NAME (ROCm blog 2024-09-17)", "MI300X"),
    ("AMD Instinct MI300X OAM", "rocm-smi Device Name (ROCm/ROCm#4750); RunPod GPU id", "MI300X"),
    ("AMD Instinct MI300X VF", "torch / rocminfo on an SR-IOV cloud VF (PCI 1002:74b5)", "MI300X"),
    ("AMD_Instinct_MI300X_OAM", "k8s labeller productName", "MI300X"),
    ("AMD Instinct MI355X", "amd-smi static --json asic.market_name", "MI355X"),
    ("AMD Instinct MI350 OAM", "amd-smi PRODUCT_NAME (MI350 series)", "GPU_VARIANT_UNKNOWN"),
    ("Aqua Vanjaram [Instinct MI300A]", "amd-smi PRODUCT_NAME on MI300A (not in the catalog)", "GPU_ALIAS_UNKNOWN"),
    ("Radeon RX 7900 XT", "rocm-smi --showproductname Card Series (an XT, not the catalog's XTX)", "GPU_ALIAS_UNKNOWN"),
    ("AMD Radeon RX 7900 XTX", "rocminfo Marketing Name", "RX 7900 XTX"),
    ("NVIDIA H200", "nvidia-smi name; RunPod GPU id", "H200"),
    ("NVIDIA A100-SXM4-80GB", "nvidia-smi name (not in the catalog)", "GPU_ALIAS_UNKNOWN"),
    ("Tesla V100-SXM2-16GB", "nvidia-smi name (not in the catalog)", "GPU_ALIAS_UNKNOWN"),
    # provider catalogs
    ("amd_mi300x", "DigitalOcean /v2/sizes gpu_info.model", "MI300X"),
    ("nvidia_h100", "DigitalOcean /v2/sizes gpu_info.model (SXM, PCIe or NVL not stated)", "GPU_VARIANT_UNKNOWN"),
    ("mi300x", "Vultr plan id word", "MI300X"),
    ("a100", "Vultr plan id word", "GPU_VARIANT_UNKNOWN"),
    ("MI300X", "SkyPilot AcceleratorName; Vast.ai gpu_name; Hot Aisle model", "MI300X"),
    ("H100 SXM", "Vast.ai gpu_name; RunPod displayName", "H100 SXM"),
    ("H200 SXM", "RunPod displayName", "H200"),
    ("NVIDIA B200", "RunPod GPU id", "B200"),
    # benchmark result files
    ("mi355x", "InferenceX hw", "MI355X"),
    ("MI325X", "vLLM --metadata gpu_model", "MI325X"),
    # bare family names stay ambiguous; other variants are not folded into the catalog's
    ("H100", "quote", "GPU_VARIANT_UNKNOWN"),
    ("MI300", "quote", "GPU_VARIANT_UNKNOWN"),
    ("AMD Instinct MI300", "quote", "GPU_VARIANT_UNKNOWN"),
    ("H100 PCIe", "quote", "GPU_ALIAS_UNKNOWN"),
    ("H100 NVL", "nvidia-smi name (94 GB)", "GPU_ALIAS_UNKNOWN"),
    ("GB200 NVL72", "quote", "GPU_ALIAS_UNKNOWN"),
    ("MI300X SXM", "quote (wrong form factor)", "GPU_ALIAS_UNKNOWN"),
    # memory suffixes must agree with the catalog
    ("MI300X 80GB", "quote", "VRAM_MISMATCH"),
    ("AMD Instinct MI300X HBM3E", "quote (MI300X has HBM3)", "VRAM_MISMATCH"),
    ("NVIDIA H100-SXM-94GB", "quote (the NVL's memory)", "VRAM_MISMATCH"),
    ("mi300x-192gb", "reliability_and_bad_inputs.md #13", "MI300X"),
    ("Instinct MI300X (192GB)", "reliability_and_bad_inputs.md #13", "MI300X"),
    # vendor pages: trademark signs and filler words
    ("AMD Instinct\u2122 MI300X Accelerator", "AMD product page title", "MI300X"),
    ("AMD Radeon\u2122 PRO W7900", "AMD product page title", "Radeon PRO W7900"),
    # look-alike characters are refused, never folded
    ("\u041d100 SXM", "Cyrillic En", "GPU_ALIAS_UNKNOWN"),
    ("\u041cI300X", "Cyrillic Em", "GPU_ALIAS_UNKNOWN"),
    ("M\u0399300X", "Greek Iota", "GPU_ALIAS_UNKNOWN"),
    ("\uff2d\uff29\uff13\uff10\uff10\uff38", "full-width", "GPU_ALIAS_UNKNOWN"),
    ("MI300X\u00a0", "trailing NBSP", "GPU_ALIAS_UNKNOWN"),
    ("MI300X\u200d", "zero-width joiner", "GPU_ALIAS_UNKNOWN"),
    ("MI3OOX", "letter O for zero", "GPU_ALIAS_UNKNOWN"),
    ("H100x", "reliability_and_bad_inputs.md #16", "GPU_ALIAS_UNKNOWN"),
]


@pytest.mark.parametrize("name,where,expected", GPU_NAMES, ids=[n for n, _, _ in GPU_NAMES])
def test_gpu_name_from_every_source(name, where, expected):
    got = names.resolve_gpu(name)
    assert (got.gpu_model or got.reason_code) == expected, (where, got)
    if got.gpu_model is None:
        assert got.detail and "'" in got.detail  # the message names the value


def test_the_same_rules_in_polars_and_the_cli_catalog():
    """Adapters (polars expressions) and check-fit/check-compat (feasibility) answer alike."""
    from provider_eval import feasibility

    catalog = feasibility.load_catalog()
    frame = pl.DataFrame({"n": [n for n, _, _ in GPU_NAMES]})
    out = frame.select(f.gpu_model(pl.col("n")).alias("m"))["m"].to_list()
    assert out == [names.resolve_gpu(n).gpu_model for n, _, _ in GPU_NAMES]
    assert out == [catalog.resolve_gpu(n) for n, _, _ in GPU_NAMES]


def test_gpu_rules_give_one_reason_per_bad_name():
    frame = pl.DataFrame({"n": ["MI300X 80GB", "H100", "H1OO", None, "  ", "AMD Instinct MI300X"]})
    reasons = [[r.reason_code for r in f.gpu_rules(pl.col("n")) if frame.select(r.failed)[i, 0]]
               for i in range(frame.height)]
    assert reasons == [["VRAM_MISMATCH"], ["GPU_VARIANT_UNKNOWN"], ["GPU_ALIAS_UNKNOWN"],
                       ["FIELD_MISSING"], ["FIELD_MISSING"], []]


def test_every_catalog_gpu_and_alias_resolves_to_itself():
    import csv
    from provider_eval.paths import REFERENCE_DIR
    with open(REFERENCE_DIR / "gpus.csv", newline="") as fh:
        models = [r["gpu_model"] for r in csv.DictReader(fh)]
    assert [names.resolve_gpu(m).gpu_model for m in models] == models
    with open(REFERENCE_DIR / "gpu_aliases.csv", newline="") as fh:
        for row in csv.DictReader(fh):
            assert names.resolve_gpu(row["alias"]).gpu_model == row["gpu_model"], row


MODEL_NAMES = [
    ("meta-llama/Llama-3.1-70B-Instruct", "vLLM model_id", "llama-3.1-70b", None),
    ("meta-llama/Meta-Llama-3.1-70B-Instruct", "the repo's former name", "llama-3.1-70b", None),
    ("amd/Llama-3.1-70B-Instruct-FP8-KV", "vLLM model_id (AMD Quark FP8)", "llama-3.1-70b", "fp8"),
    ("RedHatAI/Llama-3.1-8B-Instruct-FP8-dynamic", "vLLM model_id (compressed-tensors FP8)", "llama-3.1-8b", "fp8"),
    ("hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4", "AWQ repo id", "llama-3.1-70b", "int4"),
    ("amd/DeepSeek-R1-MXFP4", "SGLang model_path", "deepseek-r1", "mxfp4"),
    ("meta-llama/Llama-2-70b-chat-hf", "MLPerf Llama2-70B reference model", "llama-2-70b", None),
    ("meta-llama/Llama-3.3-70B-Instruct", "vLLM model_id (a different model from 3.1)", "llama-3.3-70b", None),
    ("Qwen/Qwen2.5-72B-Instruct-GPTQ-Int4", "GPTQ repo id", "qwen2.5-72b", "int4"),
    ("LLAMA-3.1-70B", "workload id in capitals", "llama-3.1-70b", None),
    ("amd/GLM-5.1-MXFP4", "InferenceX model (not in the catalog)", None, "mxfp4"),
    ("meta-llama/Llama-3.1-70B-Instruct-v2", "an unknown suffix is not stripped", None, None),
    ("llama-3.1-7", "a prefix of a catalog id is not a match", None, None),
]


@pytest.mark.parametrize("name,where,model_id,implied", MODEL_NAMES, ids=[n for n, *_ in MODEL_NAMES])
def test_model_name_from_every_source(name, where, model_id, implied):
    got = names.resolve_model(name)
    assert (got.model_id, got.implied_precision) == (model_id, implied), where


def test_model_rules_and_implied_precision_in_polars():
    frame = pl.DataFrame({"m": ["amd/Llama-3.1-70B-Instruct-FP8-KV", "amd/GLM-5.1-MXFP4", None],
                          "p": [None, None, "bf16"]})
    out = frame.select(f.model_id(pl.col("m")).alias("id"),
                       f.precision_from_model(pl.col("p"), pl.col("m")).alias("precision"),
                       *[r.failed.alias(r.reason_code) for r in f.model_rules(pl.col("m"))])
    assert out.rows() == [("llama-3.1-70b", "fp8", False), (None, "mxfp4", True), (None, "bf16", False)]


@pytest.mark.parametrize("name,expected", [
    ("AMD Instinct MI300X 192GB HBM3", ("MI300X", None)),
    ("AMD Instinct MI300X-NPS1-SPX-192GB-750W", ("MI300X", None)),
    ("AMD Instinct MI300X 80GB", (None, "VRAM_MISMATCH")),
    ("AMD Instinct MI300", (None, "GPU_VARIANT_UNKNOWN")),
])
def test_mlperf_systems_json_names_reach_the_run(tmp_path, name, expected):
    """The real v4.1 summary with its systems JSON naming the accelerator as other submissions do."""
    system = json.loads(SYSTEM_JSON.read_text())
    system["accelerator_model_name"] = name
    renamed = tmp_path / SYSTEM_JSON.name
    renamed.write_text(json.dumps(system))
    model, code = expected
    # sources.yaml saying MI300X: a name that resolves to it is no DEFAULT_CONFLICT.
    defaults = {"model_id": "llama-2-70b", **({"gpu_model": "MI300X"} if model else {})}
    result = parse("mlperf-summary", Path(str(MLPERF_RUN).format("Offline")), defaults,
                   {str(SYSTEM_JSON): str(renamed)})
    assert result.accepted["gpu_model"].to_list() == ([model] if model else [])
    assert result.quarantined["reason_code"].to_list() == ([code] if code else [])


def test_workloads_name_models_by_hugging_face_repo_id(tmp_path):
    from flows.ingest.workloads import load_workloads
    path = tmp_path / "workloads.yaml"
    head = "  - {kind: inference, unit: requests, quantity: 1, "
    path.write_text("workloads:\n"
                    + head + "id: a, model_id: meta-llama/Llama-3.1-70B-Instruct}\n"
                    + head + "id: b, model_id: amd/Llama-3.1-70B-Instruct-FP8-KV}\n"
                    + head + "id: c, model_id: amd/Llama-3.1-70B-Instruct-FP8-KV, precision: bf16}\n"
                    + head + "id: d, model_id: my-org/private-model}\n")
    rows = load_workloads(path).select("workload_id", "model_id", "precision").rows()
    # An unknown model stays as written: a model-config source may declare it (stg_workloads).
    assert rows == [("a", "llama-3.1-70b", None), ("b", "llama-3.1-70b", "fp8"), ("c", "llama-3.1-70b", "bf16"),
                    ("d", "my-org/private-model", None)]


def test_a_vllm_run_naming_the_hf_repo_id_ranks_for_the_catalog_workload(tmp_path):
    """vLLM writes `amd/Llama-3.1-70B-Instruct-FP8-KV`; the workload says `llama-3.1-70b`: they match."""
    header = (FIXTURES / "feasibility" / "quotes.csv").read_text().splitlines()[0]
    (tmp_path / "quotes.csv").write_text(
        header + "\nexample-cloud,ec-mi300x-8,MI300X,8,2.00,USD,hour,per_gpu,on_demand,hour,6.4.1,"
        "Ubuntu 22.04.5,5.15.0-122-generic,6.4.x,test fixture (hypothetical price)\n")
    shutil.copy(FIXTURES / "benchmarks" / "vllm_serve_current_mi300x.json", tmp_path / "run.json")
    (tmp_path / "workloads.yaml").write_text(
        "workloads:\n  - {id: chat, kind: inference, unit: requests, quantity: 1000, model_id: llama-3.1-70b,\n"
        "     precision: fp8, context_tokens: 4096, concurrency: 64}\n")
    sources = write_sources(tmp_path, [
        {"name": "q", "kind": "quotes", "format": "quote-csv", "path": "quotes.csv"},
        {"name": "runs", "kind": "benchmarks", "format": "vllm-serve", "path": "run.json"}])
    warehouse = tmp_path / "w.duckdb"
    assert run_refresh(warehouse, sources=sources, workloads=tmp_path / "workloads.yaml").is_completed()
    assert query(warehouse, "select model_id, precision, gpu_model from benchmark_runs") == \
        [("llama-3.1-70b", "fp8", "MI300X")]
    ((offer, runs),) = query(warehouse, "select offer_id, benchmark_run_ids from rankings where workload_id = 'chat'")
    assert offer == "ec-mi300x-8" and len(runs) == 1


def test_run_csv_resolves_models_and_quarantines_unknown_ones(tmp_path):
    path = tmp_path / "runs.csv"
    path.write_text("run_id,gpu_model,gpu_count,model_id,unit,completed,duration_s\n"
                    "a,AMD Instinct MI300X OAM,8,RedHatAI/Llama-3.1-70B-Instruct-FP8-dynamic,requests,100,10\n"
                    "b,MI300X,8,my-org/private-model,requests,100,10\n"
                    "c,nvidia_h100,8,llama-3.1-8b,requests,100,10\n")
    result = parse("run-csv", path)
    assert result.accepted.select("run_id", "gpu_model", "model_id", "precision").rows() == [
        ("a", "MI300X", "llama-3.1-70b", "fp8")]
    assert result.quarantined.select("row_number", "reason_code").rows() == [
        (2, "MODEL_UNKNOWN"), (3, "GPU_VARIANT_UNKNOWN")]
