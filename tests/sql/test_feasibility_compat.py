"""Known-answer tests for the ROCm compatibility SQL (int_compat_checks.sql) and the check-* commands."""
import json

import pytest
from typer.testing import CliRunner

from provider_eval import feasibility, reference
from provider_eval.cli import app


def request(gpu, rocm=None, os=None, kernel=None, torch=None, engine=None, driver=None):
    return {"gpu_model": gpu, "rocm_version": rocm, "os": os, "kernel": kernel, "torch_version": torch,
            "engine": engine, "amdgpu_driver_version": driver}


# Every stack the tests ask about, checked in one vectorised run of the SQL (planning it costs ~1 s).
STACKS = [
    (('MI350X', '6.4.1', 'Ubuntu 22.04.5', '5.15.0-122-generic', '2.6', 'vllm'), {}),
    (('MI300X', '6.1.0', 'Ubuntu 22.04.5'), {}),
    (('MI300X', '6.1.0', 'Ubuntu 22.04.4', '5.15.0-105-generic'), {}),
    (('MI300X', '6.1.0', 'Ubuntu 22.04.4', '6.5.0-35-generic'), {}),
    (('MI300X', '6.1.0', 'Ubuntu 22.04.4'), {}),
    (('MI300X', '6.2.4', 'Ubuntu 22.04.5', '6.8.0-50-generic'), {}),
    (('MI300X', '6.2.4', 'Ubuntu 22.04.5', '5.15.0-122-generic'), {}),
    (('MI325X', '6.4.1', 'Ubuntu 22.04.5', '5.15.0-122-generic'), {}),
    (('MI325X', '6.4.1', 'Ubuntu 22.04.5', '6.8.0-50-generic'), {}),
    (('MI325X', '6.4.1', 'Ubuntu 24.04.2', '6.8.0-50-generic'), {}),
    (('Radeon AI PRO R9700', '6.4.1', 'Ubuntu 24.04.2'), {}),
    (('Radeon AI PRO R9700', '6.4.0', 'Ubuntu 24.04.2'), {}),
    (('MI300X', '6.4.1', 'Oracle Linux 9'), {}),
    (('MI325X', '7.0.2', 'Oracle Linux 8'), {}),
    (('MI300X', '6.4.1', 'Ubuntu 22.04.5'), {'torch': '2.6.0+rocm6.4'}),
    (('MI300X', '6.2.4', 'Ubuntu 22.04.5', '5.15.0-122-generic'), {'torch': '2.6'}),
    (('MI300X', '6.1.0', 'Ubuntu 22.04.4', '5.15.0-105-generic'), {'torch': '2.8'}),
    (('MI300X', '7.1.0', 'Ubuntu 24.04.3'), {'driver': '30.20.0'}),
    (('MI300X', '7.1.0', 'Ubuntu 24.04.3'), {'driver': '6.2.x'}),
    (('MI300X', '7.1.0', 'Ubuntu 24.04.3'), {'driver': '6.8.5'}),
    (('MI300X', '7.1.0', 'Ubuntu 24.04.3'), {'torch': '2.1.2'}),
    (('MI300X', '7.1.0', 'Ubuntu 24.04.3'), {'torch': '2.10.0'}),
    (('H100 SXM', '6.4.1', 'Ubuntu 22.04.5'), {}),
    (('Radeon AI PRO R9700', '6.4', 'Ubuntu 24.04.2'), {}),
    (('MI999X', '6.4.1', 'Ubuntu 22.04.5'), {'engine': None}),
    (('MI300X', '5.7.1', 'Ubuntu 22.04.5'), {'engine': None}),
    (('MI300X', '6.4.1', 'Plan 9'), {'engine': None}),
    (('MI300X', None, 'Ubuntu 22.04.5'), {'engine': None}),
    (('MI300X', '6.4.1', 'Ubuntu 22.04'), {'engine': None}),
    (('MI450X', '7.1.0', 'Ubuntu 24.04.3'), {'engine': None}),
    (('MI355X', '7.2.3', 'Ubuntu 24.04.3'), {'engine': None}),
    (('MI300X', '6.4.1', 'Ubuntu 22.04.5'), {'engine': 'sglang'}),
    (('MI350X', '6.4.0', 'Ubuntu 22.04.5'), {}),
    (('MI350X', '6.4.3', 'Ubuntu 22.04.5'), {}),
    (('MI350X', '6.4', 'Ubuntu 22.04.5'), {}),
    (('MI350X', '6.4.x', 'Ubuntu 22.04.5'), {}),
    (('MI300X', '7.1.0', 'RHEL 9.5'), {}),
    (('MI300X', '7.1.0', 'Ubuntu 24.04.3', '6.11.0-1-generic'), {}),
]
_results: dict = {}


@pytest.fixture(scope="module", autouse=True)
def checked_together():
    requests = [request(*args, **kwargs) for args, kwargs in STACKS]
    for req, result in zip(requests, feasibility.check_compat_many(requests)):
        _results[tuple(req.values())] = result


def compat(*args, **kwargs):
    req = request(*args, **kwargs)
    key = tuple(req.values())
    if key not in _results:  # a stack not listed above: check it on its own
        _results[key] = feasibility.check_compat(req)
    return _results[key]


def test_mi350x_on_rocm_6_4_is_unsupported_with_reasons():
    result = compat("MI350X", "6.4.1", "Ubuntu 22.04.5", "5.15.0-122-generic", "2.6", "vllm")
    assert result["verdict"] == "unsupported"
    assert "gfx950 (MI350X) is not supported by ROCm 6.4.1; it is first listed in ROCm 7.0.0" in result["reasons"]
    assert "vllm on gfx950 (MI350X) needs ROCm ≥ 7.0; the stack has 6.4.1" in result["reasons"]


@pytest.mark.parametrize("rocm", ["6.4.0", "6.4.3", "6.4", "6.4.x"])
def test_mi350x_on_any_rocm_6_4_x_is_unsupported(rocm):
    assert compat("MI350X", rocm, "Ubuntu 22.04.5")["verdict"] == "unsupported"


def test_mi300x_rocm_6_1_0_ubuntu_22_04_5_is_unsupported():
    result = compat("MI300X", "6.1.0", "Ubuntu 22.04.5")
    assert result["verdict"] == "unsupported"
    assert any("Ubuntu 22.04.5 is not supported by ROCm 6.1.0" in r for r in result["reasons"])


def test_mi300x_rocm_6_1_0_needs_the_ga_kernel_on_22_04_4():
    assert compat("MI300X", "6.1.0", "Ubuntu 22.04.4", "5.15.0-105-generic")["verdict"] == "supported"
    hwe = compat("MI300X", "6.1.0", "Ubuntu 22.04.4", "6.5.0-35-generic")
    assert hwe["verdict"] == "unsupported" and any("only with the GA kernel" in r for r in hwe["reasons"])
    assert compat("MI300X", "6.1.0", "Ubuntu 22.04.4")["verdict"] == "unknown"  # kernel not declared


def test_mi300x_rocm_6_2_x_excludes_hwe_kernels():
    result = compat("MI300X", "6.2.4", "Ubuntu 22.04.5", "6.8.0-50-generic")
    assert result["verdict"] == "unsupported"
    assert any("mi300_624-past-60" in r for r in result["reasons"])
    assert compat("MI300X", "6.2.4", "Ubuntu 22.04.5", "5.15.0-122-generic")["verdict"] == "supported"


def test_mi325x_on_6_4_only_ubuntu_22_04_ga():
    assert compat("MI325X", "6.4.1", "Ubuntu 22.04.5", "5.15.0-122-generic")["verdict"] == "supported"
    assert compat("MI325X", "6.4.1", "Ubuntu 22.04.5", "6.8.0-50-generic")["verdict"] == "unsupported"
    assert compat("MI325X", "6.4.1", "Ubuntu 24.04.2", "6.8.0-50-generic")["verdict"] == "unsupported"


def test_radeon_ai_pro_r9700_rocm_6_4_1_ubuntu_24_04_2_is_supported():
    result = compat("Radeon AI PRO R9700", "6.4.1", "Ubuntu 24.04.2")
    assert result["verdict"] == "supported"
    assert result["llvm_target"] == "gfx1201"
    assert compat("Radeon AI PRO R9700", "6.4.0", "Ubuntu 24.04.2")["verdict"] == "unsupported"


def test_os_only_for_footnotes():
    assert compat("MI300X", "6.4.1", "Oracle Linux 9")["verdict"] == "supported"
    result = compat("MI325X", "7.0.2", "Oracle Linux 8")
    assert result["verdict"] == "unsupported"
    assert any("Oracle Linux 8 is supported only for MI300X" in r for r in result["reasons"])


def test_pytorch_and_driver_checks():
    assert compat("MI300X", "6.4.1", "Ubuntu 22.04.5", torch="2.6.0+rocm6.4")["verdict"] == "supported"
    old = compat("MI300X", "6.2.4", "Ubuntu 22.04.5", "5.15.0-122-generic", torch="2.6")
    assert old["verdict"] == "supported"  # pytorch.org ships torch 2.6.0 wheels for rocm6.2.4
    bad = compat("MI300X", "6.1.0", "Ubuntu 22.04.4", "5.15.0-105-generic", torch="2.8")
    assert bad["verdict"] == "unsupported" and any("PyTorch 2.8" in r for r in bad["reasons"])
    assert compat("MI300X", "7.1.0", "Ubuntu 24.04.3", driver="30.20.0")["verdict"] == "supported"
    assert compat("MI300X", "7.1.0", "Ubuntu 24.04.3", driver="6.2.x")["verdict"] == "unsupported"
    assert compat("MI300X", "7.1.0", "Ubuntu 24.04.3", driver="6.8.5")["verdict"] == "unknown"
    # pytorch.org's rocm7.1 wheels are torch 2.10, not 2.1 (read as the number 2.1, 2.10 passed for it).
    old_torch = compat("MI300X", "7.1.0", "Ubuntu 24.04.3", torch="2.1.2")
    assert old_torch["verdict"] == "unsupported" and any("PyTorch 2.1 is not listed" in r for r in old_torch["reasons"])
    assert compat("MI300X", "7.1.0", "Ubuntu 24.04.3", torch="2.10.0")["verdict"] == "supported"


def _by_version(values, newest_first=False) -> str:
    """The reference's values in version order (numeric parts, as AMD lists them), as one text."""
    def key(v):
        return [int(p) if p.isdigit() else -1 for p in v.split(".")]
    return ", ".join(sorted(values, key=key, reverse=newest_first))


def test_listed_versions_in_reasons_are_in_version_order():
    # Text order is the user's to read and must not change between builds of the same input; as
    # text, '10.0' sorted after '8.10' and '6.14' before '6.8'.
    rhel = [r["os_version"] for r in reference.rows("rocm_os_support.csv")
            if r["rocm_version"] == "7.1.0" and r["os_family"] == "RHEL"]
    assert {"10.0", "9.6", "8.10"} <= set(rhel)
    result = compat("MI300X", "7.1.0", "RHEL 9.5")
    assert f"(supported RHEL releases: {_by_version(rhel, newest_first=True)})" in " ".join(result["reasons"])
    # Every kernel AMD lists for the release or the family line it belongs to (24.04 covers 24.04.3),
    # each text once, by kernel version.
    kernels = {(r["kernel_version"], r["kernel_as_listed"]) for r in reference.rows("os_kernels.csv")
               if r["os_family"] == "Ubuntu" and (r["os_version"] == "24.04.3" or "24.04.3".startswith(r["os_version"] + "."))}
    assert len({v for v, _ in kernels}) > 1
    listed = ", ".join(text for _, text in sorted(kernels, key=lambda k: ([int(p) for p in k[0].split(".")], k[1])))
    result = compat("MI300X", "7.1.0", "Ubuntu 24.04.3", "6.11.0-1-generic")
    assert f"(listed: {listed})" in " ".join(result["reasons"])
    torch = [r["torch_major_minor"] for r in reference.rows("rocm_pytorch_versions.csv") if r["rocm_version"] == "6.1.0"]
    bad = compat("MI300X", "6.1.0", "Ubuntu 22.04.4", "5.15.0-105-generic", torch="2.8")
    assert f"(AMD lists {_by_version(torch, newest_first=True)})" in " ".join(bad["reasons"])
    drivers = [r["amdgpu_driver_version"] for r in reference.rows("rocm_amdgpu_drivers.csv") if r["rocm_version"] == "7.1.0"]
    bad = compat("MI300X", "7.1.0", "Ubuntu 24.04.3", driver="6.2.x")
    assert f"(listed: {_by_version(drivers, newest_first=True)})" in " ".join(bad["reasons"])


@pytest.mark.parametrize("gpu, rocm, os, why", [
    ("MI999X", "6.4.1", "Ubuntu 22.04.5", "not in the GPU catalog"),
    ("MI300X", "5.7.1", "Ubuntu 22.04.5", "not in the shipped matrix"),
    ("MI300X", "6.4.1", "Plan 9", "is not recognised"),
    ("MI300X", None, "Ubuntu 22.04.5", "no ROCm version is declared"),
    ("MI300X", "6.4.1", "Ubuntu 22.04", "names no point release"),
    ("MI450X", "7.1.0", "Ubuntu 24.04.3", "not confirmed"),
    ("MI355X", "7.2.3", "Ubuntu 24.04.3", "not shipped"),
    ("MI300X", "6.4.1", "Ubuntu 22.04.5", "engine sglang"),
])
def test_unknown_is_never_supported(gpu, rocm, os, why):
    result = compat(gpu, rocm, os, engine="sglang" if why == "engine sglang" else None)
    assert result["verdict"] == "unknown"
    assert any(why.replace("engine ", "engine ") in r for r in result["reasons"]), result["reasons"]


def test_nvidia_gpu_is_unsupported():
    assert compat("H100 SXM", "6.4.1", "Ubuntu 22.04.5")["verdict"] == "unsupported"


def test_point_releases_that_disagree_are_unknown():
    result = compat("Radeon AI PRO R9700", "6.4", "Ubuntu 24.04.2")
    assert result["verdict"] == "unknown"
    assert result["rocm_releases"] == ["6.4.0", "6.4.1", "6.4.2", "6.4.3"]
    assert "give the full version" in result["reasons"][0]


runner = CliRunner()


def test_check_compat_cli_exit_codes_and_json():
    args = ["check-compat", "--gpu", "MI350X", "--rocm", "6.4.1", "--os", "Ubuntu 22.04.5", "--kernel",
            "5.15.0-122-generic", "--torch", "2.6", "--engine", "vllm"]
    result = runner.invoke(app, args)
    assert result.exit_code == 1
    assert "unsupported" in result.stdout and "needs ROCm ≥ 7.0" in result.stdout
    result = runner.invoke(app, ["check-compat", "--gpu", "amd instinct mi350x", "--rocm", "7.0.1", "--os",
                                 "Ubuntu 24.04.3", "--engine", "vllm", "--format", "json"])
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert doc[0]["verdict"] == "supported" and doc[0]["gpu_model"] == "MI350X"
    assert runner.invoke(app, ["check-compat", "--gpu", "MI300X"]).exit_code == 3


def test_check_fit_cli_exit_codes_and_json():
    base = ["check-fit", "--model", "llama-3.1-70b", "--precision", "bf16", "--gpu", "MI300X", "--context", "8192"]
    result = runner.invoke(app, base + ["--gpus", "2", "--concurrency", "16", "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)[0]
    assert doc["fits"] is True and doc["gpu_count"] == 2
    for column in ("weights_bytes_per_gpu", "kv_cache_bytes_per_gpu", "activation_bytes_per_gpu",
                   "optimizer_bytes_per_gpu", "reserve_bytes_per_gpu", "available_bytes_per_gpu", "min_gpus"):
        assert column in doc
    result = runner.invoke(app, base + ["--gpus", "1", "--concurrency", "64"])
    assert result.exit_code == 1
    assert "does_not_fit" in result.stdout and "weights" in result.stdout
    fp4 = runner.invoke(app, ["check-fit", "--model", "llama-3.1-8b", "--precision", "fp4", "--gpu", "MI300X",
                              "--context", "4096"])
    assert fp4.exit_code == 1 and "no native FP4" in fp4.stdout
    lora = runner.invoke(app, ["check-fit", "--model", "llama-3.1-8b", "--gpu", "MI300X", "--context", "2048",
                               "--mode", "lora"])
    assert lora.exit_code == 0


@pytest.mark.parametrize("args", [["--model", "no-such-model", "--gpu", "MI300X"],
                                  ["--model", "llama-3.1-8b", "--gpu", "GTX 480"],
                                  ["--model", "llama-3.1-8b", "--gpu", "MI300X", "--precision", "fp3"],
                                  ["--model", "llama-3.1-8b", "--gpu", "MI300X", "--gpus", "0"],
                                  ["--model", "llama-3.1-8b", "--gpu", "MI300X", "--mode", "pretraining"]])
def test_check_fit_usage_errors_exit_2(args):
    assert runner.invoke(app, ["check-fit", *args]).exit_code == 2
