"""The probe's parsers on real captured tool outputs, the probe run locally, and the verdict rules."""
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from flows.probe import probe
from tests.sql_verdict import decide
from tests import fake_host

OUT = Path(__file__).parent.parent / "fixtures" / "probe_outputs"
PROBE = Path(probe.__file__)
MI300X_8 = {"offer_id": "o8", "provider": "p", "gpu_model": "MI300X", "gpus_per_node": 8}
MI300X_1 = {"offer_id": "o1", "provider": "p", "gpu_model": "MI300X", "gpus_per_node": 1}


def fixture_text(name: str) -> str:
    return (OUT / name).read_text(encoding="utf-8")


def section(text: str, start: str, end: str) -> str:
    """The verbatim text between two marker lines of a fixture file."""
    return text[text.index(start) + len(start):text.index(end, text.index(start))]


def run_probe_locally(env: dict, *args: str, timeout: float = 120) -> dict:
    """Run the real probe script with the fake host's PATH and sysroot; return its JSON."""
    done = subprocess.run([sys.executable, str(PROBE), "--no-bench", *args], env=fake_host.env_for(env),
                          capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


# --- parsers on the verbatim captures ---------------------------------------------------------

def test_amdsmi_v26_metric_gpu_data_wrapper_and_na_values():
    text = fixture_text("json_captures_thirdparty_amd-smi_rocm-smi.txt")
    line = next(line for line in text.splitlines() if line.startswith('AMD_MEM'))
    assert probe.parse_amdsmi_metric_vram(line) == {0: 196288 * 1024 * 1024}
    first = next(line for line in text.splitlines() if line.startswith('{"gpu_data"'))
    record = probe.gpu_records(first)[0]
    assert probe.scalar(record["temperature"]["edge"]) is None  # "N/A"
    assert probe.scalar(record["power"]["socket_power"]) == 158


def test_amdsmi_pre26_list_shape_static_vram_from_the_blog():
    text = fixture_text("amd-smi_MI300X_rocm-blog_2024-09-17.txt")
    vram = json.loads(section(text, "jq '.[0][\"vram\"]'\n", "\n# ^ NOTE"))
    assert probe.to_bytes(vram["size"]) == 206141652992  # 196592 MiB, as torch reports


def test_amdsmi_mi355x_static_list_and_uuid_shapes():
    text = fixture_text("json_captures_thirdparty_amd-smi_rocm-smi.txt")
    static_line = next(line for line in text.splitlines() if line.startswith('"static"'))
    gpus = probe.parse_amdsmi_static(static_line.split(":", 1)[1])
    assert gpus[0]["bdf"] == "0000:05:00.0" and gpus[0]["market_name"] == "AMD Instinct MI355X"
    assert gpus[0]["driver_version"] == "6.16.6"
    list_line = next(line for line in text.splitlines() if line.startswith('"list"'))
    assert probe.parse_amdsmi_list(list_line.split(":", 1)[1])[0]["partition_id"] == 0


def test_duplicated_document_is_read_once():
    text = fixture_text("json_captures_thirdparty_amd-smi_rocm-smi.txt")
    line = next(line for line in text.splitlines() if line.startswith('{"gpu_data"'))
    assert len(probe.gpu_records(line + "\n" + line)) == 1
    assert len(probe.json_documents("WARNING: banner\n" + line + "\nLegend:\n" + line)) == 2


def test_topology_old_schema_and_new_schema():
    text = fixture_text("amd-smi_topology_json_old_vs_new_amdsmi_CHANGELOG.txt")
    old = section(text, "*Previous format:*", "*New format:*")
    assert probe.parse_amdsmi_topology(old) == {"pcie_disabled": 2}
    new = section(text, "topology -a -t --json\n", "# Same changelog")
    assert probe.parse_amdsmi_topology(new) == {"pcie_disabled": 2}
    assert probe.parse_amdsmi_topology(json.dumps(fake_host.topology(fake_host.MI300X_BDFS))) == {"xgmi_enabled": 56}


def test_rocm_smi_json_identity_and_vram():
    text = fixture_text("json_captures_thirdparty_amd-smi_rocm-smi.txt")
    block = section(text, "SOURCE: marimo-team/marimo issue #9237\n", "## and the same query")
    gpu = probe.parse_rocm_smi_json(block)[0]
    assert gpu == {"index": 0, "pci_device_id": "0x744c", "gfx_target": "gfx1100",
                   "market_name": "Radeon RX 7900 XT", "vram_bytes": 21458059264}


def test_rocminfo_gpu_agent():
    gpus = probe.parse_rocminfo(fixture_text("rocminfo_MI300X_ROCm6.2.3_ROCm-issue-4021_excerpt.txt"))
    assert gpus == [{"index": 0, "pci_device_id": "0x74a1", "gfx_target": "gfx942",
                     "market_name": "AMD Instinct MI300X", "vram_bytes": 201310208 * 1024}]


def test_amdsmi_version_human_line_inbox_driver():
    text = fixture_text("amd-smi_version_list_static_misc.txt")
    line = next(line for line in text.splitlines() if line.startswith("AMDSMI Tool: 25.3.0"))
    parsed = probe.parse_amdsmi_version(line)
    assert parsed["rocm_version"] == "6.4.0" and parsed["amdgpu_version"].startswith("Linuxversion6.8.0")


def test_known_failure_messages_become_named_findings():
    text = fixture_text("rocm-smi_concise_and_dmesg_MI300X_ROCm6.2.3_ROCm-issue-4021.txt")
    findings = []
    probe.scan_known_failures(findings, text)
    codes = {f["code"] for f in findings}
    assert {"GPU_HANG", "UNCORRECTABLE_HW_ERROR", "XGMI_LINK_ERRORS"} <= codes
    findings = []
    probe.scan_known_failures(findings, "RuntimeError: No HIP GPUs are available\nhipErrorNoBinaryForGpu: Unable to find")
    assert {f["code"] for f in findings} == {"NO_HIP_GPUS", "NO_BINARY_FOR_GPU"}


def test_torch_device_properties_gfx_target_not_name():
    text = fixture_text("pytorch_device_reporting_MI300X.txt")
    assert probe.gfx_target(text[text.index("gcnArchName="):]) == "gfx942"


# --- the probe run for real, locally ----------------------------------------------------------

def test_probe_on_this_machine_reports_no_gpu_not_a_crash():
    doc = run_probe_locally({})
    assert doc["schema_version"] == probe.SCHEMA_VERSION
    assert "NO_GPU_VISIBLE" in {f["code"] for f in doc["findings"]}
    assert doc["host"]["kernel_release"] and doc["host"]["os_id"]
    assert decide(doc, MI300X_1).verdict == "fail"


def test_probe_v26_duplicated_documents(tmp_path):
    doc = run_probe_locally(fake_host.mi300x_host(tmp_path, v26=True, duplicated=True))
    assert [g["pci_device_id"] for g in doc["gpus"]] == ["0x74a1"] * 8
    assert doc["rocm"]["version_file"] == "6.2.3-116" and doc["rocm"]["amdgpu_driver_kind"] == "dkms"
    result = decide(doc, MI300X_8)
    assert result.verdict == "pass", [r.text() for r in result.reasons]


def test_probe_vf_device_is_an_mi300x_with_a_finding(tmp_path):
    doc = run_probe_locally(fake_host.mi300x_host(tmp_path, count=1, device_id="0x74b5"))
    assert "SRIOV_VF" in {f["code"] for f in doc["findings"]}
    assert decide(doc, MI300X_1).verdict == "pass"


def test_probe_cpx_partitions_are_not_extra_gpus(tmp_path):
    doc = run_probe_locally(fake_host.cpx_host(tmp_path))
    assert doc["partition"] == {"compute": ["CPX"], "memory": ["NPS4"]}
    result = decide(doc, MI300X_1)
    measured = {r.check: r.measured for r in result.reasons}
    assert measured["gpu_count"] == "1" and measured["partition"] == "CPX, NPS4; 8 logical device(s)"
    assert result.verdict == "inconclusive"
    assert [r.text() for r in result.reasons if r.check == "partition"] == [
        "INCONCLUSIVE partition: GPUs are partitioned (CPX, NPS4, 8 logical devices on 1 GPU(s)); benchmarks assume SPX/NPS1"]


def test_probe_falls_back_to_rocminfo_and_flags_missing_iommu_pt(tmp_path):
    env = fake_host.build_host(tmp_path, None, rocminfo=fixture_text("rocminfo_MI300X_ROCm6.2.3_ROCm-issue-4021_excerpt.txt"),
                               cmdline="BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro", dkms_version=None)
    doc = run_probe_locally(env)
    assert doc["gpu_source"] == "rocminfo" and doc["gpus"][0]["pci_device_id"] == "0x74a1"
    assert "MISSING_IOMMU_PT" in {f["code"] for f in doc["findings"]}


def test_probe_falls_back_to_rocm_smi(tmp_path):
    text = fixture_text("json_captures_thirdparty_amd-smi_rocm-smi.txt")
    block = section(text, "SOURCE: marimo-team/marimo issue #9237\n", "## and the same query")
    doc = run_probe_locally(fake_host.build_host(tmp_path, None, rocm_smi=block))
    assert doc["gpu_source"] == "rocm-smi" and doc["gpus"][0]["gfx_target"] == "gfx1100"


def test_a_hanging_tool_is_killed_at_its_deadline(tmp_path):
    env = fake_host.mi300x_host(tmp_path, hang=True)
    env["PROBE_TOOL_TIMEOUT_S"] = "1"
    started = time.monotonic()
    doc = run_probe_locally(env, timeout=60)
    assert time.monotonic() - started < 30
    assert "TOOL_TIMED_OUT" in {f["code"] for f in doc["findings"]}
    assert decide(doc, MI300X_8).verdict in ("fail", "inconclusive")


# --- verdict rules ----------------------------------------------------------------------------

def test_rocm_64_on_mi355x_fails_the_rocm_floor(tmp_path):
    records = [fake_host.static_record(0, "0000:05:00.0", device_id="0x75a3", market="AMD Instinct MI355X",
                                       gfx="gfx950", vram={"size": {"value": 294896, "unit": "MB"}})]
    env = fake_host.build_host(tmp_path, fake_host.amd_smi_outputs(records, v26=True), rocm_version="6.4.0")
    doc = run_probe_locally(env)
    quote = {"offer_id": "o", "provider": "p", "gpu_model": "MI355X", "gpus_per_node": 1}
    result = decide(doc, quote)
    assert result.verdict == "fail"
    assert [r.status for r in result.reasons if r.check == "rocm"] == ["fail"]
    assert [r.status for r in result.reasons if r.check == "gpu_model"] == ["pass"]


def test_nvidia_torch_means_not_amd():
    doc = {"schema_version": probe.SCHEMA_VERSION, "gpus": [],
           "torch": {"importable": True, "hip": None, "cuda": "12.8", "device_count": 1,
                     "devices": [{"index": 0, "name": "NVIDIA H200", "gcn_arch_name": None}]},
           "findings": [{"code": "NOT_AMD", "message": "PyTorch is a CUDA build", "evidence": ""}]}
    result = decide(doc, MI300X_1)
    assert result.verdict == "fail" and any("NOT_AMD" in r.check for r in result.reasons)


@pytest.mark.parametrize("gemm, verdict", [(650.0, "pass"), (420.0, "fail")])
def test_bf16_gemm_floor_from_acceptance_thresholds(tmp_path, gemm, verdict):
    doc = run_probe_locally(fake_host.mi300x_host(tmp_path))
    doc["torch"].update(gemm_bf16_8192_tflops=gemm, hbm_copy_gbps=4600.0)
    assert decide(doc, MI300X_8).verdict == verdict


def test_torch_child_is_valid_python_and_reports_missing_torch():
    compile(probe.TORCH_CHILD, "torch_child", "exec")
    facts = probe.probe_torch(bench=False)  # this interpreter has no PyTorch
    assert facts["importable"] is False and "torch" in facts["error"]


def test_rccl_and_rvs_outputs_parse():
    text = fixture_text("rvs_rccl_outputs_system-acceptance-docs.txt")
    assert probe.parse_rccl_allreduce(text) == {"message_bytes": 8589934592, "busbw_in_place_gbps": 367.51}
    gst = probe.parse_rvs_gst(text)
    assert gst[0] == {"action": "gst-1215Tflops-4K4K8K-rand-fp8", "gpu_id": 28851, "gflops": 1687129,
                      "target_gflops": 1215000, "met": True}


def test_deep_checks_run_when_installed_and_asked(tmp_path):
    text = fixture_text("rvs_rccl_outputs_system-acceptance-docs.txt")
    env = fake_host.mi300x_host(tmp_path, extra_tools={"all_reduce_perf": text, "rvs": text})
    doc = run_probe_locally(env, "--deep")
    assert doc["deep"]["rccl_allreduce"]["busbw_in_place_gbps"] == 367.51
    assert doc["deep"]["rvs_gst"]["conf"] == "MI300X/gst_single.conf"
    result = decide(doc, MI300X_8)
    assert {(r.check, r.status) for r in result.reasons} >= {("rccl_allreduce_8gpu", "pass"), ("rvs_gst", "pass")}
    doc["deep"]["rvs_gst"]["results"][0]["met"] = False
    assert decide(doc, MI300X_8).verdict == "fail"
    assert run_probe_locally(env)["deep"] == {}  # not asked: not run


# AMD's own runs, as printed in ROCm/system-acceptance-docs docs/performance-bench/mi300x.rst (SOURCES.md).
TRANSFERBENCH = "TransferBench_a2a_MI300X_system-acceptance-docs.txt"
BABELSTREAM = "BabelStream_hip-stream_MI300X_system-acceptance-docs.txt"
ROCBLAS = "rocblas-bench_gemm_fp32_4000_MI300X_system-acceptance-docs.txt"


def test_transferbench_babelstream_and_rocblas_outputs_parse():
    assert probe.parse_transferbench_a2a(fixture_text(TRANSFERBENCH)) == 35.776
    # Two ranks' tables (of 8, truncated in the doc): every Triad row, in order.
    assert probe.parse_babelstream_triad(fixture_text(BABELSTREAM)) == [3948061.647, 3947212.603]
    # Another build (OpenCL, VC4CL#82) with the same table, padded columns and a failed validation above it.
    assert probe.parse_babelstream_triad(fixture_text("BabelStream_ocl-stream_VC4CL-issue-82.txt")) == [39.135]
    assert probe.parse_rocblas_gflops(fixture_text(ROCBLAS)) == 97190.6
    # Output without the result (a crash, another tool's text): no number, never a zero.
    for text in ("", fixture_text("rvs_rccl_outputs_system-acceptance-docs.txt")):
        assert (probe.parse_transferbench_a2a(text), probe.parse_babelstream_triad(text),
                probe.parse_rocblas_gflops(text)) == (None, [], None)


def test_amd_benchmarks_run_with_amds_commands_when_installed(tmp_path):
    tools = {"TransferBench": fixture_text(TRANSFERBENCH), "hip-stream": fixture_text(BABELSTREAM),
             "rocblas-bench": fixture_text(ROCBLAS)}
    env = fake_host.mi300x_host(tmp_path / "host", count=2, extra_tools=tools)
    deep = run_probe_locally(env, "--deep")["deep"]
    assert deep["transferbench_a2a"] == {"average_gbps": 35.776, "timed_out": False}
    assert deep["rocblas_fp32_4000"] == {"gflops": 97190.6, "timed_out": False}
    assert deep["babelstream"] == {"runs": [{"device": d, "triad_mbps": 3947212.603, "timed_out": False} for d in (0, 1)]}
    ran = (tmp_path / "host" / "argv.log").read_text().splitlines()
    assert ran == ["TransferBench a2a",
                   "rocblas-bench -f gemm -r s -m 4000 -n 4000 -k 4000 --lda 4000 --ldb 4000 --ldc 4000 "
                   "--transposeA N --transposeB T",
                   "hip-stream --device 0 -n 50 -s 268435456", "hip-stream --device 1 -n 50 -s 268435456"]
    # Not installed: recorded as such (None), so the verdict can say so; not asked: nothing.
    bare = run_probe_locally(fake_host.mi300x_host(tmp_path / "bare", count=2), "--deep")["deep"]
    assert {k: bare[k] for k in ("transferbench_a2a", "rocblas_fp32_4000", "babelstream")} == \
        {"transferbench_a2a": None, "rocblas_fp32_4000": None, "babelstream": None}


def test_missing_probe_document_is_inconclusive():
    assert decide(None, MI300X_8, ["timed out"]).verdict == "inconclusive"


def test_marketing_name_is_read_by_the_shared_resolver_but_never_the_identity():
    """A board whose tools name another model than its PCI id: a note, the PCI id decides."""
    gpu = {"index": 0, "pci_device_id": "0x74a1", "gfx_target": "gfx942", "vram_bytes": 206141652992}
    doc = {"schema_version": probe.SCHEMA_VERSION, "gpus": [{**gpu, "market_name": "AMD Instinct MI325X"}]}
    result = decide(doc, MI300X_1)
    notes = [r.message for r in result.reasons if r.check == "gpu_model" and r.status == "note"]
    assert notes == ["the tools' marketing name reads as MI325X; the PCI device id / gfx target says MI300X"]
    assert any(r.check == "gpu_model" and r.status == "pass" for r in result.reasons)
    # Names that resolve to the same model (amd-smi 'MI300X-O', rocm-smi '… OAM', a VF) say nothing more.
    for name in ("MI300X-O", "AMD Instinct MI300X OAM", "AMD Instinct MI300X VF"):
        doc["gpus"] = [{**gpu, "market_name": name}]
        assert not [r for r in decide(doc, MI300X_1).reasons if r.status == "note"
                    and r.check == "gpu_model"]
