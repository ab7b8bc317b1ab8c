"""The SQL verdict (int_validation_checks / int_validation_verdicts) on real probe output from the fake hosts.

Each scenario runs the real probe script against a fake host built from captured tool outputs, records
the validation as validate-host does (before its verdict), lands it through the probe-json adapter and
decides it in SQL (provider_eval.validation_sql, the models the refresh builds).
"""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from flows.ingest.adapters import probe_json
from flows.ingest.adapters.base import FileContext
from flows.probe import probe
from provider_eval import validation_sql
from tests import fake_host
from tests.sql_verdict import decide, decide_all

PROBE = Path(probe.__file__)
VALIDATIONS = Path(__file__).parent.parent / "fixtures" / "validations"


def probe_stdout(env: dict, *args: str) -> str:
    done = subprocess.run([sys.executable, str(PROBE), "--no-bench", *args], env=fake_host.env_for(env),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def record(folder: Path, stdout: str, model: str, count: int, virtualisation: str | None = None) -> tuple[Path, dict]:
    """An evidence record as validate-host writes it before deciding, and the record."""
    from tests.sql_verdict import record as new_record
    path = new_record(folder, stdout, {"offer_id": f"o-{model}-{count}", "gpu_model": model, "gpus_per_node": count,
                                       "virtualisation": virtualisation})
    return path, json.loads(path.read_text(encoding="utf-8"))


SCENARIOS = {
    "mi300x-x8-as-quoted": (lambda root: fake_host.mi300x_host(root), "MI300X", 8, "pass"),
    "six-gpus-quoted-as-eight": (lambda root: fake_host.mi300x_host(root, count=6), "MI300X", 8, "fail"),
    "mi325x-quoted-as-mi300x": (lambda root: fake_host.mi300x_host(root, count=1, device_id="0x74a5"), "MI300X", 1, "fail"),
    "mi300x-quoted-as-mi325x": (lambda root: fake_host.mi300x_host(root, count=1), "MI325X", 1, "fail"),
    "virtual-function": (lambda root: fake_host.mi300x_host(root, count=1, device_id="0x74b5"), "MI300X", 1, None),
    "cpx-nps4": (lambda root: fake_host.cpx_host(root), "MI300X", 1, "inconclusive"),
    "h100-sxm-x8": (lambda root: fake_host.nvidia_host(root), "H100 SXM", 8, "pass"),
    "h100-quoted-as-mi300x": (lambda root: fake_host.nvidia_host(root), "MI300X", 8, "fail"),
    "h100-ecc-errors": (lambda root: fake_host.nvidia_host(root, ecc_uncorrected=3), "H100 SXM", 8, "fail"),
}


@pytest.mark.parametrize("name", SCENARIOS)
def test_the_sql_verdict_of_each_scenario(name, tmp_path):
    build, model, count, expected = SCENARIOS[name]
    path, _ = record(tmp_path / "validations", probe_stdout(build(tmp_path / "host")), model, count)
    got = validation_sql.decide(path)
    assert got.verdict == (expected or "pass"), got.reasons
    # Every check names its rule's source; none is carried from Python (software_stack is decided in SQL too).
    assert all(c["source_of_rule"] and not c["source_of_rule"].startswith("recorded") for c in got.checks)
    assert got.reasons == [f"{c['status'].upper()} {c['check_name']}: {c['message']}" for c in got.checks]


def test_a_record_without_its_probe_output_is_decided_from_what_was_recorded(tmp_path):
    """The bundled record (decided before the checks moved to SQL): its probe output gone, the recorded reasons stand."""
    folder = tmp_path / "validations"
    (folder / "probes").mkdir(parents=True)
    path = folder / "val-2cae4f97d4ac7fec.json"
    rec = json.loads((VALIDATIONS / path.name).read_text(encoding="utf-8"))
    path.write_text(json.dumps({**rec, "verdict": "fail", "reasons": ["INCONCLUSIVE transport: cut", "FAIL gpu_count: 6 of 8"]}))
    got = validation_sql.decide(path)
    assert got.verdict == "fail" and got.reasons == ["INCONCLUSIVE transport: cut", "FAIL gpu_count: 6 of 8"]
    assert [c["source_of_rule"].split(" (")[0] for c in got.checks] == [
        "project rule", "recorded by validate-host"]


def test_the_bundled_record_decides_as_it_did(tmp_path):
    """A record written before the move (no transport_problems field, Python's reasons): same verdict and reasons,
    plus software_stack, which its record never carried and SQL now decides from its facts (a note: ROCm 6.2.3)."""
    path = VALIDATIONS / "val-2cae4f97d4ac7fec.json"
    rec = json.loads(path.read_text(encoding="utf-8"))
    got = validation_sql.decide(path)
    stack = "NOTE software_stack: unknown: ROCm 6.2.3 is not in the shipped matrix (ROCm 6.0.0 to 7.2.3)"
    assert got.verdict == rec["verdict"] == "pass" and sorted(got.reasons) == sorted(rec["reasons"] + [stack])


def test_bad_records_are_one_quarantined_row_each_with_every_bad_field(tmp_path):
    folder = tmp_path / "validations"
    path, rec = record(folder, probe_stdout(fake_host.mi300x_host(tmp_path / "host", count=1)), "MI300X", 1)
    bad = folder / "val-bad.json"
    bad.write_text(json.dumps({**rec, "validated_at": "yesterday", "quoted_gpu_count": "eight", "port": 1e400,
                               "verdict": "maybe"}))
    cases = {"val-bad.json": {"validated_at", "quoted_gpu_count", "port", "verdict"}}
    for name, text in (("val-text.json", "{not json"), ("val-list.json", "[1, 2]"), ("val-deep.json", "[" * 100000)):
        (folder / name).write_text(text)
    for file in sorted(folder.glob("val-*.json")):
        ctx = FileContext(path=file, source_name="hardware-validations", original_name=file.name, file_sha256="0" * 64,
                          first_seen_at="", defaults={}, original_path=str(file),
                          companions={str(p): str(p) for p in probe_json.companion_probe(file)})
        result = probe_json.parse(ctx)
        assert result.rows_in == 1 and result.accepted.height + result.quarantined.height == 1
        if file == path:
            assert result.accepted.height == 1 and result.details["validation_gpus"].height == 1
            continue
        assert result.quarantined["reason_code"].to_list() == ["EVIDENCE_INVALID"], file.name
        detail = result.quarantined["detail"][0]
        for field in cases.get(file.name, ()):
            assert f"{field}:" in detail, detail


@pytest.mark.parametrize("device_id, stated, expected", [
    ("0x74b5", "bare_metal", ("fail", "quote says bare metal; 1 of 1 GPU(s) are SR-IOV virtual functions (PCI 0x74b5)")),
    ("0x74a1", "bare_metal", ("pass", "no GPU is an SR-IOV virtual function, as a bare-metal quote implies")),
    ("0x74b5", "passthrough", None),  # a VM: the SRIOV_VF finding stays a note
    ("0x74b5", None, None),
])
def test_a_virtual_function_sold_as_bare_metal_fails(tmp_path, device_id, stated, expected):
    stdout = probe_stdout(fake_host.mi300x_host(tmp_path / "host", count=1, device_id=device_id))
    path, rec = record(tmp_path / "validations", stdout, "MI300X", 1, virtualisation=stated)
    got = validation_sql.decide(path)
    checks = {c["check_name"]: c for c in got.checks}
    if expected is None:
        assert "virtualisation" not in checks and got.verdict == "pass"  # the SRIOV_VF finding stays a note
        return
    assert (checks["virtualisation"]["status"], checks["virtualisation"]["message"]) == expected
    assert checks["virtualisation"]["source_of_rule"].startswith("the quote (offers.virtualisation); gpus.csv")
    assert got.verdict == expected[0]


FIXTURES = Path(__file__).parent.parent / "fixtures" / "probe_outputs"


def test_pytorch_seeing_fewer_gpus_than_the_tools_is_inconclusive(tmp_path):
    # An 8 x MI300X node (amd-smi, captured values) whose PyTorch sees 2 devices: capture (3) of
    # pytorch_device_reporting_MI300X.txt, torch 2.3.0 in a container given 2 MI300X (hip not reported there).
    capture = (FIXTURES / "pytorch_device_reporting_MI300X.txt").read_text(encoding="utf-8")
    assert "Version: 2.3.0a0+gitd2f9472\nDevices: 2\n" in capture
    devices = [{"index": i, "name": "AMD Instinct MI300X", "gcn_arch_name": "gfx942:sramecc+:xnack-",
                "total_memory_bytes": 196592 * 2**20} for i in range(2)]
    doc = json.loads(probe_stdout(fake_host.mi300x_host(tmp_path / "host")))
    doc["torch"] = {**doc["torch"], "importable": True, "version": "2.3.0a0+gitd2f9472", "hip": None, "cuda": None,
                    "available": True, "device_count": 2, "devices": devices}
    path, rec = record(tmp_path / "validations", json.dumps(doc), "MI300X", 8)
    got = validation_sql.decide(path)
    visible = [c for c in got.checks if c["check_name"] == "visible_gpus"]
    assert [(c["status"], c["message"]) for c in visible] == [
        ("inconclusive", "PyTorch (torch 2.3.0a0+gitd2f9472) sees 2 of the 8 device(s) amd-smi lists")]
    assert (visible[0]["measured"], visible[0]["expected"]) == ("2", "8")
    assert got.verdict == "inconclusive"


# PyTorch on ROCm as captured: capture (1) of pytorch_device_reporting_MI300X.txt (ROCm/ROCm issue #4203).
HIP_62 = "6.2.41133-dd7f95766"


def test_capture_torch_hip_release_is_the_one_the_check_reads():
    capture = (FIXTURES / "pytorch_device_reporting_MI300X.txt").read_text(encoding="utf-8")
    assert f"torch=2.6.0a0+gitd6a066e, hip={HIP_62}" in capture and "gcnArchName='gfx942:sramecc+:xnack-'" in capture


@pytest.mark.parametrize("host, quote, status, message", [
    # An 8 x MI300X (gfx942) node running that build: ROCm 6.2 lists gfx942.
    (lambda root: fake_host.mi300x_host(root), {"gpu_model": "MI300X", "gpus_per_node": 8}, "pass",
     f"PyTorch was built with HIP {HIP_62} (ROCm 6.2), which lists gfx942"),
    # The same build on an MI355X (gfx950): ROCm 6.2 does not list gfx950 (first listed with 7.0.0).
    (lambda root: fake_host.build_host(root, fake_host.amd_smi_outputs([fake_host.static_record(
        0, "0000:05:00.0", device_id="0x75a3", market="AMD Instinct MI355X", gfx="gfx950",
        vram={"size": {"value": 294896, "unit": "MB"}})], v26=True), rocm_version="7.0.0"),
     {"gpu_model": "MI355X", "gpus_per_node": 1}, "fail",
     f"PyTorch was built with HIP {HIP_62} (ROCm 6.2), which does not list gfx950: the build has no kernels for this GPU"),
])
def test_gfx_target_against_the_rocm_release_pytorch_was_built_with(tmp_path, host, quote, status, message):
    doc = json.loads(probe_stdout(host(tmp_path / "host")))
    doc["torch"] = {**doc["torch"], "importable": True, "version": "2.6.0a0+gitd6a066e", "hip": HIP_62, "cuda": None,
                    "device_count": quote["gpus_per_node"]}
    got = decide(doc, quote)
    target = [r for r in got.reasons if r.check == "gfx_target"]
    assert [(r.status, r.message) for r in target] == [(status, message)]
    assert target[0].source_of_rule.startswith("rocm_gpu_targets.csv")
    assert got.verdict == ("fail" if status == "fail" else "pass")


def test_a_hip_release_the_matrix_does_not_list_is_a_note(tmp_path):
    doc = json.loads(probe_stdout(fake_host.mi300x_host(tmp_path / "host")))
    doc["torch"] = {**doc["torch"], "importable": True, "hip": "5.7.31921", "device_count": 8}
    target = [r for r in decide(doc, {"gpu_model": "MI300X", "gpus_per_node": 8}).reasons if r.check == "gfx_target"]
    assert [r.status for r in target] == ["note"] and "5.7 is not in rocm_gpu_targets.csv" in target[0].message


def _stack(doc: dict, rocm: str | None, os_name: str | None, kernel: str | None, torch: str | None) -> dict:
    """The fake host's document with another measured stack (ROCm file, os-release PRETTY_NAME, uname -r, torch)."""
    doc = json.loads(json.dumps(doc))
    doc["rocm"].update(version_file=rocm, amdsmi_rocm_version=None)
    doc["host"].update(os_pretty_name=os_name, kernel_release=kernel)
    if torch:
        doc["torch"].update(importable=True, version=torch, hip=None, device_count=8)
    return doc


# (measured stack, quoted model) -> the software_stack row the SQL decides, through AMD's matrix. The rows
# are those validate-host printed when it carried the check from Python (feasibility.check_compat) on the
# same documents (compared on 17 documents when the check moved to SQL).
STACKS = [
    (("6.4.1-1", "Ubuntu 22.04.5 LTS", "5.15.0-122-generic", "2.6.0+rocm6.4.1"), "MI300X", "pass",
     "supported: MI300X (gfx942) with ROCm 6.4.1: every declared component is listed as compatible in AMD's matrix"),
    (("6.4.1-1", "Ubuntu 22.04.4 LTS", None, None), "MI300X", "fail",
     "unsupported: Ubuntu 22.04.4 is not supported by ROCm 6.4.1 (supported Ubuntu releases: 24.04.2, 22.04.5)"),
    (("6.4.1", "Ubuntu 22.04.5 LTS", "6.8.0-45-generic", "2.1.0"), "MI300X", "fail",
     "unsupported: PyTorch 2.1 is not listed for ROCm 6.4.1 (AMD lists 2.6, 2.5, 2.4, 2.3)"),
    (("6.2.3", None, None, None), "MI300X", "note",
     "unknown: ROCm 6.2.3 is not in the shipped matrix (ROCm 6.0.0 to 7.2.3); no OS is declared"),
    ((None, "Ubuntu 22.04.5 LTS", None, None), "MI300X", "note", "unknown: no ROCm version is declared"),
]


def test_the_measured_stack_is_judged_by_amds_matrix_in_sql(tmp_path):
    doc = json.loads(probe_stdout(fake_host.mi300x_host(tmp_path / "host")))
    cases = [(_stack(doc, *stack), {"gpu_model": model, "gpus_per_node": 8}) for stack, model, _, _ in STACKS]
    # The same stack on a host that is not the quoted GPU, and on an NVIDIA quote: no matrix verdict.
    cases += [(cases[1][0], {"gpu_model": "MI325X", "gpus_per_node": 8}), (cases[1][0], {"gpu_model": "H100 SXM", "gpus_per_node": 8})]
    got = decide_all(cases)
    for (_, _, status, message), result in zip(STACKS, got):
        [row] = [r for r in result.reasons if r.check == "software_stack"]
        assert (row.status, row.message) == (status, message)
        assert row.source_of_rule.startswith("AMD's compatibility matrix") and row.expected.startswith("supported")
    assert got[0].reasons[[r.check for r in got[0].reasons].index("software_stack")].measured == \
        "ROCm 6.4.1, Ubuntu 22.04.5, kernel 5.15.0-122-generic, PyTorch 2.6.0"
    assert got[1].verdict == "fail" and got[0].verdict == "pass"
    assert not [r for r in got[-2].reasons if r.check == "software_stack"]
    assert [(r.status, r.message.split(":")[0]) for r in got[-1].reasons if r.check == "software_stack"] == \
        [("note", "not applicable")]


RCCL = (FIXTURES / "rvs_rccl_outputs_system-acceptance-docs.txt").read_text(encoding="utf-8")


@pytest.mark.parametrize("busbw, quoted, check, status", [
    (None, 8, "rccl_allreduce_8gpu", "pass"),        # the captured 367.51 GB/s at 8 GiB vs MI300X's 304
    (250.0, 8, "rccl_allreduce_8gpu", "fail"),       # the same run, a host 18 % under the floor
    ("fast", 8, "rccl_allreduce", "inconclusive"),   # not a number
])
def test_rccl_all_reduce_against_the_8_gpu_floor(tmp_path, busbw, quoted, check, status):
    env = fake_host.mi300x_host(tmp_path / "host", extra_tools={"all_reduce_perf": RCCL, "rvs": RCCL})
    doc = json.loads(probe_stdout(env, "--deep"))
    assert doc["deep"]["rccl_allreduce"] == {"message_bytes": 8589934592, "busbw_in_place_gbps": 367.51, "gpus": 8,
                                             "timed_out": False}
    if busbw is not None:
        doc["deep"]["rccl_allreduce"]["busbw_in_place_gbps"] = busbw
    got = decide(doc, {"gpu_model": "MI300X", "gpus_per_node": quoted})
    rccl = [r for r in got.reasons if r.check.startswith("rccl")]
    assert [(r.check, r.status) for r in rccl] == [(check, status)]
    if status != "inconclusive":
        assert rccl[0].expected == ">= 304 GB/s" and "system-acceptance-docs" in rccl[0].source_of_rule
    assert ("rvs_gst", "pass") in {(r.check, r.status) for r in got.reasons}


def test_rccl_on_fewer_gpus_than_the_floor_is_a_note_and_a_timeout_is_inconclusive(tmp_path):
    env = fake_host.mi300x_host(tmp_path / "host", count=4, extra_tools={"all_reduce_perf": RCCL})
    doc = json.loads(probe_stdout(env, "--deep"))
    assert doc["deep"]["rccl_allreduce"]["gpus"] == 4
    got = decide(doc, {"gpu_model": "MI300X", "gpus_per_node": 4})
    assert [(r.check, r.status, r.message) for r in got.reasons if r.check.startswith("rccl")] == [
        ("rccl_allreduce", "note", "in-place busbw 367.51 GB/s (4 GPUs, 8589934592 B); no floor applies")]
    doc["deep"]["rccl_allreduce"] = {"gpus": 4, "timed_out": True}
    got = decide(doc, {"gpu_model": "MI300X", "gpus_per_node": 4})
    assert [(r.status, r.message) for r in got.reasons if r.check.startswith("rccl")] == [
        ("inconclusive", "all_reduce_perf did not finish in time")]


def test_rvs_gst_result_that_missed_its_target_fails(tmp_path):
    env = fake_host.mi300x_host(tmp_path / "host", extra_tools={"rvs": RCCL})
    doc = json.loads(probe_stdout(env, "--deep"))
    first = doc["deep"]["rvs_gst"]["results"][0]
    doc["deep"]["rvs_gst"]["results"][0] = {**first, "gflops": 1100000, "met": False}
    got = decide(doc, {"gpu_model": "MI300X", "gpus_per_node": 8})
    rvs = [r for r in got.reasons if r.check == "rvs_gst"]
    n = len(doc["deep"]["rvs_gst"]["results"])
    assert [(r.status, r.message) for r in rvs] == [
        ("fail", f"1 of {n} RVS gst result(s) missed target, e.g. 1100000 < {first['target_gflops']} GFLOPS")]
    doc["deep"]["rvs_gst"]["results"] = []
    assert [r.status for r in decide(doc, {"gpu_model": "MI300X", "gpus_per_node": 8}).reasons
            if r.check == "rvs_gst"] == ["inconclusive"]


def test_transport_problems_make_it_inconclusive_never_a_pass(tmp_path):
    stdout = probe_stdout(fake_host.mi300x_host(tmp_path / "host"))
    got = decide(stdout, {"gpu_model": "MI300X", "gpus_per_node": 8},
                 transport=["the remote command exited with status 137: Killed"])
    assert got.verdict == "inconclusive"
    assert got.lines[0] == "INCONCLUSIVE transport: the remote command exited with status 137: Killed"


@pytest.mark.parametrize("workload, status", [
    ({"template": "vllm-serve", "skipped": False, "problem": None, "result_format": "vllm-serve"}, "pass"),
    ({"template": "vllm-serve", "skipped": False, "problem": "vllm exited with status 1"}, "inconclusive"),
    ({"template": "vllm-serve", "skipped": True, "problem": "not run: the host failed validation"}, "note"),
])
def test_the_workload_outcome_is_a_check(tmp_path, workload, status):
    stdout = probe_stdout(fake_host.mi300x_host(tmp_path / "host"))
    got = decide(stdout, {"gpu_model": "MI300X", "gpus_per_node": 8}, workload=workload)
    assert [r.status for r in got.reasons if r.check == "workload"] == [status]
    assert got.verdict == ("inconclusive" if status == "inconclusive" else "pass")


# AMD's own runs of its cluster-validation benchmarks (ROCm/system-acceptance-docs, SOURCES.md), replayed by
# the fake host's stand-in tools; the floors are acceptance_thresholds.csv's MI300X rows from the same doc.
BENCH_TOOLS = {"TransferBench": "TransferBench_a2a_MI300X_system-acceptance-docs.txt",
               "hip-stream": "BabelStream_hip-stream_MI300X_system-acceptance-docs.txt",
               "rocblas-bench": "rocblas-bench_gemm_fp32_4000_MI300X_system-acceptance-docs.txt"}
BENCH_CHECKS = ("transferbench_a2a", "babelstream_triad", "rocblas_fp32_4000")


def _bench_rows(result) -> list[tuple]:
    return [(r.check, r.status, r.measured, r.expected, r.message) for r in result.reasons if r.check in BENCH_CHECKS]


def test_amd_cluster_benchmarks_against_their_floors(tmp_path):
    tools = {name: (FIXTURES / file).read_text(encoding="utf-8") for name, file in BENCH_TOOLS.items()}
    measured = json.loads(probe_stdout(fake_host.mi300x_host(tmp_path / "host", extra_tools=tools), "--deep"))
    missing = json.loads(probe_stdout(fake_host.mi300x_host(tmp_path / "bare"), "--deep"))
    slow = json.loads(json.dumps(measured))
    slow["deep"]["transferbench_a2a"]["average_gbps"] = 30.1
    slow["deep"]["babelstream"]["runs"][3]["triad_mbps"] = 3800000.5   # one GPU of eight below the floor
    slow["deep"]["rocblas_fp32_4000"]["gflops"] = 90000.0
    odd = json.loads(json.dumps(measured))
    odd["deep"]["transferbench_a2a"]["average_gbps"] = "fast"
    odd["deep"]["babelstream"]["runs"][0]["timed_out"] = True
    odd["deep"]["rocblas_fp32_4000"]["gflops"] = None
    mi300x = {"gpu_model": "MI300X", "gpus_per_node": 8}
    got = decide_all([(measured, mi300x), (slow, mi300x), (missing, mi300x), (odd, mi300x),
                      (measured, {"gpu_model": "MI325X", "gpus_per_node": 8}),
                      (measured, {"gpu_model": "H100 SXM", "gpus_per_node": 8})])
    assert _bench_rows(got[0]) == [
        ("transferbench_a2a", "pass", "35.776", ">= 32.9 GB/s", "average all-to-all bandwidth 35.776 GB/s (floor 32.9)"),
        ("babelstream_triad", "pass", "3947212.603", ">= 3885301 MB/s",
         "Triad of the slowest of 8 GPU(s) 3947212.603 MB/s (floor 3885301)"),
        ("rocblas_fp32_4000", "pass", "97190.6", ">= 94100 GFLOPS", "FP32 4000³ gemm 97190.6 GFLOPS (floor 94100)")]
    assert all("system-acceptance-docs" in r.source_of_rule for r in got[0].reasons if r.check in BENCH_CHECKS)
    assert got[0].verdict == "pass"
    # Below a floor: a fail with both numbers.
    assert [(c, s, m) for c, s, _, _, m in _bench_rows(got[1])] == [
        ("transferbench_a2a", "fail", "average all-to-all bandwidth 30.1 GB/s is below the floor of 32.9 GB/s"),
        ("babelstream_triad", "fail", "Triad of the slowest of 8 GPU(s) 3800000.5 MB/s is below the floor of 3885301 MB/s"),
        ("rocblas_fp32_4000", "fail", "FP32 4000³ gemm 90000 GFLOPS is below the floor of 94100 GFLOPS")]
    assert got[1].verdict == "fail"
    # Not installed on the host: a note that says so; the verdict does not change.
    assert [(c, s, m) for c, s, _, _, m in _bench_rows(got[2])] == [
        ("transferbench_a2a", "note", "TransferBench a2a is not installed on the host (not on PATH): not run"),
        ("babelstream_triad", "note", "BabelStream (hip-stream) is not installed on the host (not on PATH): not run"),
        ("rocblas_fp32_4000", "note", "rocblas-bench is not installed on the host (not on PATH): not run")]
    assert got[2].verdict == "pass"
    # Not a number, cut off by the deadline, no result line: undecided, never a pass.
    assert [(c, s, m) for c, s, _, _, m in _bench_rows(got[3])] == [
        ("transferbench_a2a", "inconclusive", "TransferBench a2a average all-to-all bandwidth is not a finite number (fast)"),
        ("babelstream_triad", "inconclusive", "BabelStream (hip-stream) did not finish within the deep deadline"),
        ("rocblas_fp32_4000", "inconclusive", "rocblas-bench printed no result")]
    # No floor for the quoted model (the floors are MI300X's): the number as a note; NVIDIA quotes: none of these.
    assert {(c, s) for c, s, *_ in _bench_rows(got[4])} == {(c, "note") for c in BENCH_CHECKS}
    assert "no floor for MI325X" in _bench_rows(got[4])[0][4]
    assert _bench_rows(got[5]) == []


def test_several_records_decided_in_one_build_as_each_alone(tmp_path):
    paths = [record(tmp_path / "validations", probe_stdout(build(tmp_path / name)), model, count)[0]
             for name, (build, model, count, _) in list(SCENARIOS.items())[:3]]
    together = validation_sql.decide_many(paths)
    assert together == [validation_sql.decide(p) for p in paths]
    assert [v.verdict for v in together] == ["pass", "fail", "fail"]
