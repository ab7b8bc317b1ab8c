"""One memory basis for every GPU, QLoRA's 4-bit base, and training activation checkpointing modes (int_memory_fit.sql)."""
import csv
import json
import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from provider_eval import feasibility
from provider_eval.cli import app
from provider_eval.paths import REFERENCE_DIR

GIB = 2**30
PROBES = Path(__file__).parent.parent / "fixtures" / "probe_outputs"


def fit(**request):
    request.setdefault("mode", "inference")
    return feasibility.check_fit(request)


def catalog() -> dict[str, dict]:
    with (REFERENCE_DIR / "gpus.csv").open(newline="") as f:
        return {r["gpu_model"]: r for r in csv.DictReader(f)}


def measured() -> dict[str, dict]:
    with (REFERENCE_DIR / "gpu_memory.csv").open(newline="") as f:
        return {r["gpu_model"]: r for r in csv.DictReader(f)}


# --- the measured byte counts are the ones the captured tool outputs print -------------------------------

def test_measured_byte_counts_agree_with_the_captured_tool_outputs():
    torch_mi300x = re.search(r"total_memory=(\d+)MB", (PROBES / "pytorch_device_reporting_MI300X.txt").read_text())
    amd_smi = (PROBES / "json_captures_thirdparty_amd-smi_rocm-smi.txt").read_text()
    mi355x = json.loads(next(line.split("=", 1)[1] if line.startswith("AMD_") else line.split(":", 1)[1].rstrip(", ")
                             for line in amd_smi.splitlines() if "294896" in line))
    rocminfo = (PROBES / "rocminfo_RX7900XTX_ROCm6.0.0_amd-gpu-hello_excerpt.txt").read_text()
    pool_kb = re.search(r"COARSE GRAINED\s+Size:\s+(\d+)\(", rocminfo)
    rows = measured()
    assert int(rows["MI300X"]["memory_bytes"]) == int(torch_mi300x.group(1)) * 2**20  # torch's "MB" is MiB
    assert int(rows["MI355X"]["memory_bytes"]) == mi355x["gpu_data"][0]["mem_usage"]["total_vram"]["value"] * 2**20
    assert int(rows["RX 7900 XTX"]["memory_bytes"]) == int(pool_kb.group(1)) * 1024 == 25_753_026_560
    assert {r["measured_by"] for r in rows.values()} <= {"amd-smi", "rocm-smi", "rocminfo", "torch", "nvidia-smi"}


def test_every_gpu_has_one_basis_and_none_reads_gb_as_10_to_the_9():
    gpus, known = catalog(), measured()
    results = feasibility.check_fit_many([dict(model_id="llama-3.1-8b", precision="bf16", gpu_model=g, gpu_count=1,
                                               context_tokens=1024, mode="inference") for g in gpus])
    for gpu, r in zip(gpus, results):
        marketed = int(gpus[gpu]["memory_gb_marketed"])
        assert r["available_bytes_per_gpu"] != marketed * 10**9, gpu
        if gpu in known:
            assert (r["memory_basis"], r["available_bytes_per_gpu"]) == ("measured", int(known[gpu]["memory_bytes"]))
        elif r["memory_basis"] == "marketed_gib":
            assert r["available_bytes_per_gpu"] == marketed * GIB, gpu
            assert f"read as {marketed} x 2^30 bytes" in r["memory_source"]
        else:
            assert r["memory_basis"] == "measured_same_memory", gpu


def test_mi350x_has_the_bytes_measured_on_the_mi355x_the_same_288_gb_hbm3e():
    r = fit(model_id="llama-3.1-8b", precision="bf16", gpu_model="MI350X", gpu_count=1, context_tokens=1024)
    assert r["available_bytes_per_gpu"] == 294_896 * 2**20 == 309_220_868_096
    assert r["memory_basis"] == "measured_same_memory" and r["memory_source"].startswith("measured on MI355X")


@pytest.mark.parametrize("model, precision, mode, context, concurrency", [
    ("llama-3.1-70b", "bf16", "inference", 131_072, 1),
    ("llama-3.1-70b", "bf16", "inference", 131_072, 4),
    ("llama-3.1-405b", "fp8", "inference", 8192, 32),
    ("deepseek-r1", "fp8", "inference", 16_384, 8),
    ("llama-3.1-8b", "bf16", "training", 4096, 4),
    ("llama-3.1-70b", "bf16", "lora", 4096, 2),
])
def test_mi350x_and_mi355x_give_the_same_answer_for_the_same_request(model, precision, mode, context, concurrency):
    for count in (1, 2, 4, 8):
        a, b = feasibility.check_fit_many([dict(model_id=model, precision=precision, mode=mode, gpu_model=g,
                                                gpu_count=count, context_tokens=context, concurrency=concurrency)
                                           for g in ("MI350X", "MI355X")])
        assert (a["verdict"], a["min_gpus"], a["required_bytes_per_gpu"], a["available_bytes_per_gpu"]) == \
            (b["verdict"], b["min_gpus"], b["required_bytes_per_gpu"], b["available_bytes_per_gpu"])


def test_an_8b_bf16_model_at_40k_context_fits_the_rx_7900_xtx():
    """16.06 GB weights + 5.24 GB KV (40,000 tokens × 128 KiB) + 1.14 GB prefill activations + 10 % reserve
    = 25.02 GB: under the 25,753,026,560 B rocminfo reports, over the 24 × 10^9 the old basis assumed."""
    r = fit(model_id="llama-3.1-8b", precision="bf16", gpu_model="RX 7900 XTX", gpu_count=1,
            context_tokens=40_000, concurrency=1, engine="vllm")
    assert r["weights_bytes_per_gpu"] == 8_030_261_248 * 2
    assert r["kv_cache_bytes_per_gpu"] == 40_000 * 131_072
    assert r["reserve_bytes_per_gpu"] == round(25_753_026_560 * 0.1)
    assert 24 * 10**9 < r["required_bytes_per_gpu"] < r["available_bytes_per_gpu"] == 25_753_026_560
    assert r["verdict"] == "fits"


def _reference_with(tmp_path, gpu_rows: list[dict]) -> Path:
    ref = tmp_path / "reference"
    shutil.copytree(REFERENCE_DIR, ref)
    with (ref / "gpus.csv").open(newline="") as f:
        fields = next(csv.reader(f))
    with (ref / "gpus.csv").open("a", newline="") as f:
        writer = csv.DictWriter(f, fields, lineterminator="\n")
        for row in gpu_rows:
            writer.writerow({k: row.get(k, "") for k in fields})
    return ref


def test_a_new_gpu_follows_the_same_rule(tmp_path):
    """Added to gpus.csv without a measurement: a same-memory twin's count, else marketed GiB."""
    base = catalog()["MI355X"]
    ref = _reference_with(tmp_path, [{**base, "gpu_model": "MI355X-TEST", "source": "test-only row"},
                                     {**base, "gpu_model": "MI999-TEST", "memory_gb_marketed": "100", "source": "test-only row"}])
    twin, new = feasibility.check_fit_many(
        [dict(model_id="llama-3.1-8b", precision="bf16", gpu_model=g, gpu_count=1, context_tokens=1024,
              mode="inference") for g in ("MI355X-TEST", "MI999-TEST")], reference_dir=ref)
    assert (twin["memory_basis"], twin["available_bytes_per_gpu"]) == ("measured_same_memory", 309_220_868_096)
    assert (new["memory_basis"], new["available_bytes_per_gpu"]) == ("marketed_gib", 100 * GIB)


# --- QLoRA: a 4-bit base unless stated, never a silent bf16 -------------------------------------------------

def test_a_qlora_request_without_a_precision_has_an_nf4_base():
    """int_fit_requests reads an unstated QLoRA precision as nf4 (0.5 + 0.127/8 bytes per parameter)."""
    r = fit(model_id="llama-3.1-70b", precision=None, mode="qlora", gpu_model="MI300X", gpu_count=1,
            context_tokens=2048)
    assert r["precision"] == "nf4"
    assert r["weights_bytes_per_gpu"] == pytest.approx(70_553_706_496 * 0.515875, abs=1)


def _check_fit(*args):
    return CliRunner().invoke(app, ["check-fit", "--model", "llama-3.1-70b", "--gpu", "MI300X", *args])


def test_check_fit_qlora_defaults_to_nf4():
    result = _check_fit("--mode", "qlora", "--context", "2048", "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)[0]["precision"] == "nf4"


def test_check_fit_qlora_with_a_16_bit_base_is_a_usage_error():
    result = _check_fit("--mode", "qlora", "--precision", "bf16", "--context", "2048")
    assert result.exit_code == 2
    assert "16-bit or wider" in result.output and "--mode lora" in result.output


# --- training activations: none | selective | full (Korthikanti et al. 2022) --------------------------------

def test_activation_checkpointing_modes_match_the_hand_calculation():
    """Llama-3.1-8B (h 4096, L 32, a 32), s = 4096 tokens, b = 4 sequences per GPU, 16-bit activations."""
    s, b, h, L, a = 4096, 4, 4096, 32, 32
    want = {"none": s * b * L * (34 * h + 5 * a * s),            # 416,611,827,712 B
            "selective": 34 * s * b * h * L,                      # 73,014,444,032 B
            "full": 2 * s * b * h * L + s * b * (34 * h + 5 * a * s)}  # 17,314,086,912 B
    got = feasibility.check_fit_many([dict(model_id="llama-3.1-8b", precision="bf16", mode="training",
                                           gpu_model="MI300X", gpu_count=8, context_tokens=s, concurrency=b,
                                           activation_checkpointing=m) for m in want])
    assert {r["activation_checkpointing"]: r["activation_bytes_per_gpu"] for r in got} == want
    assert want["none"] == 416_611_827_712 and want["selective"] == 73_014_444_032 and want["full"] == 17_314_086_912


def test_selective_is_the_default_for_training():
    default, selective = feasibility.check_fit_many([
        dict(model_id="llama-3.1-8b", precision="bf16", mode="lora", gpu_model="MI300X", gpu_count=1,
             context_tokens=4096, concurrency=4, activation_checkpointing=m) for m in (None, "selective")])
    assert default["activation_checkpointing"] == "selective"
    assert default["activation_bytes_per_gpu"] == selective["activation_bytes_per_gpu"]


def test_check_fit_takes_the_checkpointing_mode():
    result = CliRunner().invoke(app, ["check-fit", "--model", "llama-3.1-8b", "--gpu", "MI300X", "--mode", "training",
                                      "--context", "4096", "--concurrency", "4", "--activation-checkpointing", "full",
                                      "--gpus", "8", "--format", "json"])
    row = json.loads(result.output)[0]
    assert (row["activation_checkpointing"], row["activation_bytes_per_gpu"]) == ("full", 17_314_086_912)
