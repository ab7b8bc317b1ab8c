"""NVIDIA hosts: the probe's nvidia-smi parsers on real captures, the probe against a stand-in
nvidia-smi, the verdict rules, the fraction-of-datasheet floors, real device-check captures and
`make device-check` without a GPU."""
import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from flows.ingest import names
from flows.probe import probe, sanitise
from flows.probe.verdict import NVIDIA, Reference
from tests.sql_verdict import decide
from provider_eval.exit_codes import ExitCode
from provider_eval.paths import PROJECT_ROOT, REFERENCE_DIR
from tests import fake_host

OUT = Path(__file__).parent.parent / "fixtures" / "probe_outputs"
PROBE = Path(probe.__file__)
H100_8 = {"offer_id": "n8", "provider": "p", "gpu_model": "H100 SXM", "gpus_per_node": 8}
H200_8 = {"offer_id": "h8", "provider": "p", "gpu_model": "H200", "gpus_per_node": 8}
MI300X_8 = {"offer_id": "o8", "provider": "p", "gpu_model": "MI300X", "gpus_per_node": 8}
# The documented convention (docs/validation.md#nvidia-floors): the share of MI300X's datasheet peak
# that AMD Primus node_smoke's floors are (600 of 1307.4 TFLOPS, 2000 of 5300 GB/s).
GEMM_FRACTION, HBM_FRACTION = 600 / 1307.4, 2000 / 5300
NO_AMD_TOOLS_CMDLINE = "BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro"  # no iommu=pt: only an AMD host is told to add it


def fixture_text(name: str) -> str:
    return (OUT / name).read_text(encoding="utf-8")


def run_probe(env: dict, *args: str) -> dict:
    done = subprocess.run([sys.executable, str(PROBE), "--no-bench", *args], env=fake_host.env_for(env),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def statuses(result) -> dict[str, str]:
    return {r.check: r.status for r in result.reasons}


# --- parsers on the verbatim captures ---------------------------------------------------------

def test_banner_driver_and_cuda_old_and_r610_wording():
    h100 = probe.parse_nvidia_smi_header(fake_host.nvidia_capture()["table"])
    assert h100 == {"smi_version_line": "NVIDIA-SMI 565.57.01              Driver Version: 565.57.01      "
                                        "CUDA Version: 12.7", "driver_version": "565.57.01", "cuda_driver_version": "12.7"}
    b200 = probe.parse_nvidia_smi_header(fixture_text("nvidia-smi_B200_R610_banner_sglang-issue-27487_excerpt.txt"))
    assert (b200["driver_version"], b200["cuda_driver_version"]) == ("610.43.02", "13.3")
    assert probe.parse_nvidia_smi_header("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.")[
        "driver_version"] is None


def test_query_gpu_csv_shape_from_a_real_capture():
    text = fixture_text("nvidia-smi_query-gpu_csv_RTX2080_gpu-utils-issue-83.txt")
    command = text.split("## command\n")[1].split("\n")[0]
    fields = tuple(command.split("--query-gpu=")[1].split(" ")[0].split(","))
    row, = probe.parse_nvidia_csv(text.split("## output\n")[1], fields)
    assert row["name"] == "GeForce RTX 2080" and row["memory.total"] == "7979" and row["driver_version"] == "440.64"
    assert row["temperature.memory"] is None  # "N/A"
    assert probe.to_bytes(row["memory.total"], "MIB") == 7979 * 1024 * 1024
    # A header line or an error message is never a GPU.
    assert probe.parse_nvidia_csv("index, name\nNo devices were found\n", ("index", "name")) == []


def test_nvcc_release():
    assert probe.parse_nvcc_version(fixture_text("nvcc_version_CUDA12.8_ollama-issue-9031.txt")) == "12.8"


def test_nvidia_smi_names_resolve_through_the_one_resolver():
    """The names nvidia-smi prints (captures in SOURCES.md) → catalog models, via flows/ingest/names.py."""
    assert names.resolve_gpu("NVIDIA H100 80GB HBM3").gpu_model == "H100 SXM"
    assert names.resolve_gpu("NVIDIA H200").gpu_model == "H200"
    assert names.resolve_gpu("NVIDIA B200").gpu_model == "B200"
    assert names.resolve_gpu("NVIDIA H100 NVL").gpu_model is None  # not the SXM part, not in the catalog


# --- the probe against a stand-in nvidia-smi --------------------------------------------------

def test_probe_reads_an_nvidia_node(tmp_path):
    doc = run_probe(fake_host.nvidia_host(tmp_path, cmdline=NO_AMD_TOOLS_CMDLINE))
    assert doc["gpu_source"] == "nvidia-smi" and len(doc["gpus"]) == 8
    gpu = doc["gpus"][0]
    assert gpu["vendor"] == NVIDIA and gpu["market_name"] == "NVIDIA H100 80GB HBM3"
    assert gpu["pci_device_id"] == "0x2330"  # -q "Device Id : 0x233010DE" ("GPU Part Number : 2330-885-A1")
    assert gpu["vram_bytes"] == 81559 * 1024 * 1024 == 85520809984  # modal-client PR 2797: 85.52 GB
    assert gpu["bdf"] == "00000000:18:00.0" and gpu["mig_mode"] == "Disabled" and gpu["ecc_uncorrected_volatile"] == 0
    assert doc["nvidia"]["driver_version"] == "565.57.01" and doc["nvidia"]["cuda_driver_version"] == "12.7"
    assert doc["nvidia"]["nvcc_cuda_version"] == "12.8"
    # No AMD advice on an NVIDIA host: no iommu=pt finding, no NOT_AMD.
    assert doc["findings"] == []
    assert sanitise.clean_document(doc)[1] == []  # every new field has its documented type


def test_old_driver_without_the_newer_fields_still_identifies(tmp_path):
    doc = run_probe(fake_host.nvidia_host(tmp_path, count=1, extra_fields_supported=False))
    assert doc["gpus"][0]["market_name"] == "NVIDIA H100 80GB HBM3" and doc["gpus"][0]["ecc_uncorrected_volatile"] is None
    result = decide(doc, {**H100_8, "gpus_per_node": 1})
    assert result.verdict == "pass" and "ecc" not in statuses(result)


@pytest.mark.parametrize("message, code", [
    ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest "
     "NVIDIA driver is installed and running.", "NVIDIA_DRIVER_NOT_LOADED"),       # NVIDIA/nvidia-docker#988
    ("Failed to initialize NVML: Driver/library version mismatch", "NVIDIA_DRIVER_MISMATCH"),  # shine-cluster#50
])
def test_a_broken_driver_is_a_named_failure(tmp_path, message, code):
    doc = run_probe(fake_host.build_host(tmp_path, None, rocm_version="", dkms_version=None,
                                         extra_tools={"nvidia-smi": message + "\n"}))
    assert {code, "NO_GPU_VISIBLE"} <= {f["code"] for f in doc["findings"]}
    result = decide(doc, H100_8)
    assert result.verdict == "fail" and statuses(result)[f"finding {code}"] == "fail"


# --- verdict rules ----------------------------------------------------------------------------

def test_pass_against_the_quote_and_rocm_checks_not_applicable(tmp_path):
    result = decide(run_probe(fake_host.nvidia_host(tmp_path)), H100_8)
    assert result.verdict == "pass", [r.text() for r in result.reasons]
    got = statuses(result)
    assert got["gpu_model"] == got["gpu_count"] == got["vram"] == got["ecc"] == "pass"
    for check in ("rocm", "links", "software_stack"):
        assert got[check] == "note"
        assert next(r.message for r in result.reasons if r.check == check).startswith("not applicable")
    measured = {r.check: r.measured for r in result.reasons}
    assert measured["gpu_model"] == "H100 SXM" and measured["nvidia_stack"].startswith("driver 565.57.01, CUDA (driver) 12.7")


def test_an_h100_node_sold_as_h200_fails_on_model_and_memory(tmp_path):
    result = decide(run_probe(fake_host.nvidia_host(tmp_path)), H200_8)
    assert result.verdict == "fail"
    texts = [r.text() for r in result.reasons]
    assert "FAIL gpu_model: quote says H200, host has H100 SXM" in texts
    assert any(t.startswith("FAIL vram: smallest GPU has 85520809984 bytes; a H200 has 141 GB") for t in texts)


def test_an_nvidia_node_quoted_as_amd_fails_and_amd_quote_keeps_its_rules(tmp_path):
    result = decide(run_probe(fake_host.nvidia_host(tmp_path)), MI300X_8)
    assert result.verdict == "fail" and statuses(result)["gpu_model"] == "fail"


def test_not_amd_finding_does_not_fail_an_nvidia_quote():
    """torch sees CUDA GPUs but nvidia-smi is absent (container without the utils): names come from torch.cuda."""
    doc = {"schema_version": probe.SCHEMA_VERSION, "gpus": [],
           "torch": {"importable": True, "hip": None, "cuda": "12.8", "device_count": 1,
                     "devices": [{"index": 0, "name": "NVIDIA H200", "gcn_arch_name": None,
                                  "total_memory_bytes": 143771 * 1024 * 1024}]},
           "findings": [{"code": "NOT_AMD", "message": "PyTorch is a CUDA build", "evidence": ""}]}
    result = decide(doc, {**H200_8, "gpus_per_node": 1})
    assert statuses(result)["finding NOT_AMD"] == "note" and statuses(result)["gpu_model"] == "pass"
    assert result.verdict == "pass", [r.text() for r in result.reasons]
    assert decide(doc, {**MI300X_8, "gpus_per_node": 1}).verdict == "fail"


@pytest.mark.parametrize("seen, status", [(8, None), (4, "inconclusive"), (0, "fail")])
def test_gpus_installed_vs_usable_from_pytorch(tmp_path, seen, status):
    doc = run_probe(fake_host.nvidia_host(tmp_path))
    doc["torch"] = {"importable": True, "cuda": "12.8", "hip": None, "available": bool(seen), "device_count": seen,
                    "devices": []}
    assert statuses(decide(doc, H100_8)).get("visible_gpus") == status


def test_uncorrected_ecc_errors_fail(tmp_path):
    result = decide(run_probe(fake_host.nvidia_host(tmp_path, ecc_uncorrected=3)), H100_8)
    assert result.verdict == "fail" and statuses(result)["ecc"] == "fail"


def test_mig_enabled_is_inconclusive(tmp_path):
    result = decide(run_probe(fake_host.nvidia_host(tmp_path, mig="Enabled")), H100_8)
    assert result.verdict == "inconclusive" and statuses(result)["partition"] == "inconclusive"


def test_a_board_the_catalog_does_not_have_is_not_the_quoted_model(tmp_path):
    result = decide(run_probe(fake_host.nvidia_host(tmp_path, name="NVIDIA H100 NVL")), H100_8)
    model = next(r for r in result.reasons if r.check == "gpu_model")
    assert result.verdict == "fail" and model.measured.startswith("unknown (nvidia-smi name")


def test_a_family_name_is_inconclusive_not_a_guess(tmp_path):
    result = decide(run_probe(fake_host.nvidia_host(tmp_path, name="NVIDIA H100")), H100_8)
    assert statuses(result)["gpu_model"] == "inconclusive" and result.verdict == "inconclusive"


@pytest.mark.parametrize("gemm, hbm, verdict", [(650.0, 2900.0, "pass"), (300.0, 2900.0, "fail"), (650.0, 900.0, "fail")])
def test_micro_benchmarks_against_the_nvidia_floors(tmp_path, gemm, hbm, verdict):
    doc = run_probe(fake_host.nvidia_host(tmp_path))
    doc["torch"].update(gemm_bf16_8192_tflops=gemm, hbm_copy_gbps=hbm)
    assert decide(doc, H100_8).verdict == verdict


def test_nvidia_floors_are_the_documented_fraction_of_the_catalog_datasheet_figures():
    gpus = {g["gpu_model"]: g for g in csv.DictReader(open(REFERENCE_DIR / "gpus.csv", encoding="utf-8"))}
    rows = [r for r in csv.DictReader(open(REFERENCE_DIR / "acceptance_thresholds.csv", encoding="utf-8"))
            if gpus.get(r["gpu_model"], {}).get("vendor") == NVIDIA]
    assert {(r["gpu_model"], r["check"]) for r in rows} == {
        (m, c) for m in ("H100 SXM", "H200", "B200") for c in ("gemm_bf16_8192", "hbm_copy")}
    for r in rows:
        peak = (float(gpus[r["gpu_model"]]["bf16_dense_tflops"]) * GEMM_FRACTION if r["check"] == "gemm_bf16_8192"
                else float(gpus[r["gpu_model"]]["memory_bandwidth_tbps"]) * 1000 * HBM_FRACTION)
        assert float(r["pass_at_or_above"]) == round(peak, 1), r
        assert "project convention" in r["source"] and "NVIDIA datasheet" in r["source"]


# --- real captures: the public one, and every device-check folder that lands here ----------

def capture_cases() -> list:
    """The probe on the public H100 capture, plus each real `make device-check` output kept in the fixtures."""
    cases = [pytest.param("public", id="H100-SXM-x8-public-capture")]
    for folder in sorted(OUT.glob("device-check_*")):
        cases.append(pytest.param(folder, id=folder.name))
    return cases


@pytest.mark.parametrize("case", capture_cases())
def test_real_capture_identity_memory_and_benchmarks_vs_the_datasheet(tmp_path, case):
    ref = Reference.load()
    if case == "public":
        doc, expected = run_probe(fake_host.nvidia_host(tmp_path)), "H100 SXM"
    else:
        doc, problems = sanitise.parse_probe_output((case / "probe_stdout.json").read_text(encoding="utf-8"))
        assert problems == []
        provenance = json.loads((case / "provenance.json").read_text(encoding="utf-8"))
        assert provenance["started_at_utc"] and provenance["hostname"] and provenance["nvidia_smi_version_line"]
        expected = names.resolve_gpu(provenance["gpu_names"][0]).gpu_model
    gpus = doc["gpus"]
    # Identity: every GPU's nvidia-smi name resolves to the one catalog model.
    assert {names.resolve_gpu(g["market_name"]).gpu_model for g in gpus} == {expected}
    catalog = ref.catalog(expected)
    # Memory in bytes, of the marketed class: at least the marketed GB, at most 10 % over (141 GB → 150.8e9 B).
    marketed = float(catalog["memory_gb_marketed"]) * 1e9
    assert all(marketed <= g["vram_bytes"] <= marketed * 1.10 for g in gpus), [g["vram_bytes"] for g in gpus]
    quote = {"offer_id": "c", "provider": "c", "gpu_model": expected, "gpus_per_node": len(gpus)}
    result = decide(doc, quote)
    assert result.verdict in ("pass", "inconclusive") and statuses(result)["gpu_model"] == "pass"
    torch = doc.get("torch") or {}
    for field, peak, fraction in (("gemm_bf16_8192_tflops", float(catalog["bf16_dense_tflops"]), GEMM_FRACTION),
                                  ("hbm_copy_gbps", float(catalog["memory_bandwidth_tbps"]) * 1000, HBM_FRACTION)):
        value = torch.get(field)
        if value is None:  # no PyTorch on the capture's host: the verdict says so, it does not pass a floor
            assert statuses(result)[field.rsplit("_", 1)[0]] == "note"
        else:  # plausible: at or above the floor, never above the datasheet peak
            assert peak * fraction <= value <= peak, (field, value, peak)


# --- make device-check ------------------------------------------------------------------------

def device_check(*args: str, path: str, out_env: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "OUT"}
    env.update(PATH=path, PYTHONPATH=str(PROJECT_ROOT))
    if out_env:
        env["OUT"] = out_env
    return subprocess.run([sys.executable, "-m", "bench.device_check", "--python", sys.executable, *args],
                          cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=300)


def test_device_check_without_a_gpu_is_inconclusive_with_provenance(tmp_path):
    bare = tmp_path / "bin"  # only the basics: no nvidia-smi, amd-smi, nvcc or rocminfo on PATH
    bare.mkdir()
    for tool in ("timeout", "git", "sh"):
        target = subprocess.run(["which", tool], capture_output=True, text=True).stdout.strip()
        (bare / tool).symlink_to(target)
    done = device_check(path=str(bare), out_env=str(tmp_path / "out"))  # no folder given: $OUT is used
    assert done.returncode == ExitCode.INCONCLUSIVE, done.stdout + done.stderr
    assert "no GPU found" in done.stdout
    out = tmp_path / "out"
    assert sorted(p.name for p in out.iterdir()) == ["probe_stderr.txt", "probe_stdout.json", "provenance.json",
                                                     "summary.txt", "verdict.json"]
    record = json.loads((out / "verdict.json").read_text())
    assert record["verdict"] == "inconclusive" and "no GPU found" in record["reasons"][0]
    assert "NO_GPU_VISIBLE" in record["findings"]
    prov = json.loads((out / "provenance.json").read_text())
    assert prov["started_at_utc"].endswith("+00:00") and prov["hostname"] and prov["probe_exit_status"] == 0
    assert prov["checker_python_version"] and prov["probe_python_version"]
    assert prov["nvidia_smi_version_line"] is None and prov["gpu_count"] == 0
    assert json.loads((out / "probe_stdout.json").read_text())["schema_version"] == probe.SCHEMA_VERSION


def test_device_check_on_an_nvidia_node_records_the_tool_versions(tmp_path):
    env = fake_host.nvidia_host(tmp_path / "host")
    out = tmp_path / "dc"
    done = device_check(str(out), "--no-bench", path=env["PATH"])
    assert done.returncode == ExitCode.OK, done.stdout + done.stderr
    assert done.stdout.startswith("device-check: PASS against H100 SXM x 8")
    prov = json.loads((out / "provenance.json").read_text())
    assert prov["nvidia_smi_version_line"].startswith("NVIDIA-SMI 565.57.01")
    assert (prov["nvidia_driver_version"], prov["cuda_driver_version"], prov["cuda_toolkit_version"]) == (
        "565.57.01", "12.7", "12.8")
    assert prov["gpu_names"] == ["NVIDIA H100 80GB HBM3"] and prov["gpu_count"] == 8
    # Checked against another quote, the same output fails (exit 1).
    assert device_check(str(tmp_path / "dc2"), "--no-bench", "--gpu-model", "H200", path=env["PATH"]).returncode == 1
