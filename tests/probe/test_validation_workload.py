"""The representative benchmark of a validation: allow-listed, run over real SSH, ingested as a measured run."""
import json
import shlex
import shutil
import stat
from pathlib import Path

import pytest

from flows.probe import workload
from flows.probe.validate import validate_host
from tests import fake_host
from tests.conftest import FIXTURES, query, run_refresh
from tests.sshd import make_keys, running_sshd

EIGHT_GPU_OFFER = "amd-devcloud-mi300x-8"  # MI300X × 8 in data/samples/quotes/public_price_points.csv
RESULT = FIXTURES / "benchmarks" / "vllm_serve_current_mi300x.json"

# A stand-in `vllm` for the fake host: records its argv, then writes a real-shaped --save-result file
# (the captured fixture with the --metadata pairs merged in, as vLLM does).
FAKE_VLLM = """#!/usr/bin/env python3
import json, sys
args = sys.argv[1:]
open({argv_log!r}, "w").write(json.dumps(args))
if {fail!r}:
    print("ERROR: connection refused to localhost:8000", file=sys.stderr)
    sys.exit(1)
value = lambda flag: args[args.index(flag) + 1]
result = json.load(open({result!r}))
for i, a in enumerate(args):
    if a == "--metadata":
        k, _, v = args[i + 1].partition("=")
        result[k] = v
print("benchmark progress output goes to stderr", file=sys.stderr)
json.dump(result, open(value("--result-dir") + "/" + value("--result-filename"), "w"))
"""


def host_with_vllm(root: Path, fail: bool = False, count: int = 8) -> tuple[dict, Path]:
    env = fake_host.mi300x_host(root, count=count)
    argv_log = root / "vllm-argv.json"
    script = Path(env["PATH"].split(":")[0]) / "vllm"
    script.write_text(FAKE_VLLM.format(argv_log=str(argv_log), fail=fail, result=str(RESULT)))
    script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return env, argv_log


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    return make_keys(tmp_path_factory.mktemp("keys"))


@pytest.fixture
def warehouse(tmp_path, sample_warehouse) -> Path:
    path = tmp_path / "wh" / "provider_eval.duckdb"
    path.parent.mkdir()
    shutil.copy(sample_warehouse, path)
    return path


def _validate(server, warehouse, **kwargs):
    return validate_host("127.0.0.1", EIGHT_GPU_OFFER, server.user, server.port, server.identity_file,
                         server.known_hosts, warehouse, bench=False, timeout_s=60,
                         workload="vllm-serve", workload_timeout_s=60, **kwargs)


@pytest.mark.parametrize("params, message", [
    ({"model": "m; rm -rf /"}, "model='m; rm -rf /'"),
    ({"model": "$(id)"}, "model='$(id)'"),
    ({"model": "org/model", "port": "8000 --help"}, "port='8000 --help'"),
    ({"model": "org/model", "num_prompts": "-1"}, "num_prompts='-1'"),
    ({"model": "org/model", "extra_args": "--trust-remote-code"}, "takes no parameter(s) ['extra_args']"),
    ({}, "needs model="),
])
def test_bad_benchmark_parameters_are_rejected(params, message):
    with pytest.raises(workload.WorkloadRejected) as err:
        workload.build_command("vllm-serve", params, {}, 60)
    assert message in str(err.value)


def test_unknown_template_and_hostile_metadata_are_rejected():
    with pytest.raises(workload.WorkloadRejected, match="not one of"):
        workload.build_command("curl-pipe-sh", {"model": "a/b"}, {}, 60)
    with pytest.raises(workload.WorkloadRejected, match="metadata"):
        workload.build_command("vllm-serve", {"model": "a/b"}, {"provider": "x`id`"}, 60)


def test_the_command_is_the_template_with_quoted_checked_tokens():
    command, result_dir = workload.build_command(
        "vllm-serve", {"model": "meta-llama/Llama-3.1-8B-Instruct", "concurrency": "32"},
        {"provider": "acme cloud"}, 900)
    tokens = shlex.split(command)
    assert tokens[:4] == ["mkdir", "-p", result_dir, "&&"]
    run = tokens[4:tokens.index(">&2")]
    assert run[:8] == ["timeout", "-k", "10", "900", "vllm", "bench", "serve", "--model"]
    assert run[run.index("--max-concurrency") + 1] == "32"
    assert run[-2:] == ["--metadata", "provider=acme cloud"]


def test_a_representative_benchmark_becomes_a_measured_run_for_the_offer(tmp_path, keys, warehouse):
    env, argv_log = host_with_vllm(tmp_path / "host")
    with running_sshd(tmp_path / "sshd", keys, env) as server:
        record = _validate(server, warehouse, workload_params={"model": "amd/Llama-3.1-70B-Instruct-FP8-KV"})
    assert record["verdict"] == "pass", record["reasons"]
    assert "PASS workload: vllm-serve completed" in " ".join(record["reasons"])
    argv = json.loads(argv_log.read_text())
    assert argv[:4] == ["bench", "serve", "--model", "amd/Llama-3.1-70B-Instruct-FP8-KV"]
    result_path = Path(record["workload"]["result_path"])
    assert result_path.parent == warehouse.parent / "validations" / "benchmarks" / "vllm-serve"
    # The next refresh ingests it as a measured run of the quoted configuration.
    assert run_refresh(warehouse).is_completed()
    assert query(warehouse, """
        select provider, gpu_model, gpu_count, output_tokens_per_s from benchmark_runs
        where source_name = 'validation-benchmarks-vllm-serve'""") == [
        ("amd-developer-cloud", "MI300X", 8, 12000.0)]


def test_a_failed_benchmark_makes_the_verdict_inconclusive(tmp_path, keys, warehouse):
    env, _ = host_with_vllm(tmp_path / "host", fail=True)
    with running_sshd(tmp_path / "sshd", keys, env) as server:
        record = _validate(server, warehouse, workload_params={"model": "org/model"})
    assert record["verdict"] == "inconclusive"
    assert any("INCONCLUSIVE workload: the benchmark exited with status 1" in r and "connection refused" in r
               for r in record["reasons"])
    assert record["workload"]["result_path"] is None


def test_no_benchmark_is_credited_to_a_host_that_failed_validation(tmp_path, keys, warehouse):
    env, argv_log = host_with_vllm(tmp_path / "host", count=6)
    with running_sshd(tmp_path / "sshd", keys, env) as server:
        record = _validate(server, warehouse, workload_params={"model": "org/model"})
    assert record["verdict"] == "fail"
    assert record["workload"]["problem"] == "not run: the host failed validation"
    assert not argv_log.exists()


def test_a_measured_stack_amd_does_not_support_fails_the_host(tmp_path, keys, warehouse):
    env = fake_host.mi300x_host(tmp_path / "host", rocm_version="6.4.1-1")
    (Path(env["PROBE_SYSROOT"]) / "etc" / "os-release").write_text(
        'NAME="Ubuntu"\nVERSION_ID="22.04"\nPRETTY_NAME="Ubuntu 22.04.4 LTS"\nID=ubuntu\n')
    with running_sshd(tmp_path / "sshd", keys, env) as server:
        record = validate_host("127.0.0.1", EIGHT_GPU_OFFER, server.user, server.port, server.identity_file,
                               server.known_hosts, warehouse, bench=False, timeout_s=60)
    assert record["verdict"] == "fail"
    [stack] = [r for r in record["reasons"] if "software_stack" in r]
    assert stack.startswith("FAIL software_stack: unsupported") and "Ubuntu 22.04.4 is not supported by ROCm 6.4.1" in stack


def test_the_fake_hosts_stack_is_checked_against_the_matrix(tmp_path, keys, warehouse):
    with running_sshd(tmp_path / "sshd", keys, fake_host.mi300x_host(tmp_path / "host")) as server:
        record = validate_host("127.0.0.1", EIGHT_GPU_OFFER, server.user, server.port, server.identity_file,
                               server.known_hosts, warehouse, bench=False, timeout_s=60)
    [stack] = [r for r in record["reasons"] if "software_stack" in r]
    assert "ROCm 6.2.3" in stack or "6.2.3" in stack
