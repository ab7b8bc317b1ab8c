"""Deployments on a real Prefect server: deploy from prefect.yaml, run through a worker, schedules, Dask."""
import datetime as dt
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import yaml
from cronsim import CronSim

from provider_eval.paths import PROJECT_ROOT
from tests.conftest import query

PREFECT = str(Path(sys.executable).with_name("prefect"))
PREFECT_YAML = PROJECT_ROOT / "deployments" / "prefect.yaml"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_healthy(url: str, proc: subprocess.Popen, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"prefect server exited with {proc.returncode}")
        try:
            urllib.request.urlopen(f"{url}/health", timeout=2)
            return
        except OSError:
            time.sleep(0.5)
    raise TimeoutError(f"prefect server at {url} not healthy after {timeout_s}s")


@pytest.fixture(scope="module")
def prefect_server(tmp_path_factory):
    """A real `prefect server start` (SQLite) on a free loopback port, and a process worker."""
    home = tmp_path_factory.mktemp("prefect-server")
    port = _free_port()
    # The worker runs elsewhere than the checkout, and its default warehouse is a writable scratch
    # path set the way an operator sets it (the environment), never by a parameter.
    elsewhere = tmp_path_factory.mktemp("worker-cwd")
    env = {**os.environ, "PREFECT_HOME": str(home), "PREFECT_API_URL": f"http://127.0.0.1:{port}/api",
           "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "DO_NOT_TRACK": "1",
           "PROVIDER_EVAL_HOME": str(PROJECT_ROOT),
           "PROVIDER_EVAL_WAREHOUSE": str(tmp_path_factory.mktemp("declared") / "provider_eval.duckdb"),
           "WORKER_CWD": str(elsewhere)}
    log = open(home / "server.log", "w")
    server = subprocess.Popen([PREFECT, "server", "start", "--host", "127.0.0.1", "--port", str(port)],
                              env=env, stdout=log, stderr=subprocess.STDOUT)
    worker = None
    try:
        _wait_healthy(env["PREFECT_API_URL"], server)
        run = lambda *args: subprocess.run([PREFECT, *args], env=env, cwd=PROJECT_ROOT,  # noqa: E731
                                           capture_output=True, text=True, check=True)
        run("work-pool", "create", "provider-eval", "--type", "process", "--overwrite")
        run("--no-prompt", "deploy", "--all", "--prefect-file", str(PREFECT_YAML))
        worker = subprocess.Popen([PREFECT, "worker", "start", "--pool", "provider-eval"], env=env,
                                  cwd=elsewhere, stdout=log, stderr=subprocess.STDOUT)
        yield env
    finally:
        for proc in (worker, server):
            if proc is not None:
                proc.terminate()
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
        log.close()


def _run_deployment(env, warehouse: Path, timeout_s: int = 240) -> subprocess.CompletedProcess:
    return subprocess.run(
        [PREFECT, "deployment", "run", "refresh-pricing/refresh-pricing",
         "--param", f"warehouse_path={warehouse}", "--watch", "--watch-timeout", str(timeout_s)],
        env=env, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=timeout_s + 30)


def test_schedule_parses_and_runs_every_six_hours_utc():
    deployments = {d["name"]: d for d in yaml.safe_load(PREFECT_YAML.read_text())["deployments"]}
    assert set(deployments) == {"refresh-pricing", "validate-host"}
    assert "schedules" not in deployments["validate-host"]  # on demand only
    deployment = deployments["refresh-pricing"]
    [schedule] = deployment["schedules"]
    assert schedule["timezone"] == "UTC"
    start = dt.datetime(2026, 11, 29, 13, 7)
    nexts = [next(it) for it in [iter(CronSim(schedule["cron"], start))] for _ in range(3)]
    assert nexts == [dt.datetime(2026, 11, 29, 18, 0), dt.datetime(2026, 11, 30, 0, 0),
                     dt.datetime(2026, 11, 30, 6, 0)]
    assert deployment["concurrency_limit"] == {"limit": 1, "collision_strategy": "ENQUEUE"}


def test_a_deployed_refresh_runs_through_a_worker_and_publishes(prefect_server, tmp_path):
    warehouse = tmp_path / "w.duckdb"
    result = _run_deployment(prefect_server, warehouse)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Completed" in result.stdout
    assert query(warehouse, "select gpu_model from rankings where rank = 1 "
                            "and workload_id = 'seed-000-same-task'") == [("MI350X",)]


def test_every_deployment_runs_exactly_as_declared(prefect_server, tmp_path):
    """#17: each deployment of prefect.yaml run with no parameter overrides, from outside the checkout."""
    from tests import fake_host
    from tests.sshd import make_keys, running_sshd
    from tests.probe.test_validate_host import EIGHT_GPU_OFFER

    declared = {d["name"]: d for d in yaml.safe_load(PREFECT_YAML.read_text())["deployments"]}
    assert set(declared) == {"refresh-pricing", "validate-host"}  # a new deployment needs its run here
    warehouse = Path(prefect_server["PROVIDER_EVAL_WAREHOUSE"])
    cwd = prefect_server["WORKER_CWD"]
    result = subprocess.run(
        [PREFECT, "deployment", "run", "refresh-pricing/refresh-pricing", "--watch", "--watch-timeout", "240"],
        env=prefect_server, cwd=cwd, capture_output=True, text=True, timeout=270)
    assert result.returncode == 0 and "Completed" in result.stdout, result.stdout + result.stderr
    assert query(warehouse, "select gpu_model, total_cost_usd::varchar from rankings "
                            "where workload_id = 'seed-000-same-task' order by rank") == [
        ("MI350X", "16.000000"), ("MI325X", "19.250000"), ("MI300X", "20.000000")]
    assert not (Path(cwd) / "warehouse").exists() and (warehouse.parent / "data_docs").is_dir()

    # validate-host declares no parameters either; it needs the host and offer every run names.
    (tmp_path / "keys").mkdir()
    keys = make_keys(tmp_path / "keys")
    with running_sshd(tmp_path / "sshd", keys, fake_host.mi300x_host(tmp_path / "host")) as server:
        params = {"host": "127.0.0.1", "offer_id": EIGHT_GPU_OFFER, "user": server.user, "port": server.port,
                  "identity_file": str(server.identity_file), "known_hosts": str(server.known_hosts),
                  "bench": False, "timeout_s": 60}
        assert not set(params) & set(declared["validate-host"].get("parameters") or {})
        result = subprocess.run(
            [PREFECT, "deployment", "run", "validate-host/validate-host", "--params", json.dumps(params),
             "--watch", "--watch-timeout", "240"],
            env=prefect_server, cwd=cwd, capture_output=True, text=True, timeout=270)
    assert result.returncode == 0 and "Completed" in result.stdout, result.stdout + result.stderr
    [evidence] = list((warehouse.parent / "validations").glob("val-*.json"))
    assert json.loads(evidence.read_text())["verdict"] == "pass"


def test_two_concurrent_deployment_runs_leave_one_consistent_warehouse(prefect_server, tmp_path, sample_warehouse):
    warehouse = tmp_path / "w.duckdb"
    runs = [subprocess.Popen(
        [PREFECT, "deployment", "run", "refresh-pricing/refresh-pricing", "--param",
         f"warehouse_path={warehouse}", "--watch", "--watch-timeout", "300"],
        env=prefect_server, cwd=PROJECT_ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for _ in range(2)]
    outputs = [p.communicate(timeout=330)[0] for p in runs]
    assert all(p.returncode == 0 and "Completed" in out for p, out in zip(runs, outputs)), outputs
    assert query(warehouse, "select count(*), min(rank), max(rank) from rankings "
                            "where workload_id = 'seed-000-same-task'") == [(3, 1, 3)]
    manifest = "select count(*), sum(rows_in), sum(rows_accepted) from ingest_manifest"
    assert query(warehouse, manifest) == query(sample_warehouse, manifest)
    assert not list((tmp_path / ".build").iterdir())


def test_dask_task_runner_gives_the_same_tables_as_threads(tmp_path, monkeypatch, sample_warehouse):
    # The Dask runner hands the in-process API's URL to its workers via PREFECT_API_URL; undo after.
    # setenv first: delenv of an absent variable records nothing to undo, and the URL set during the
    # test would outlive it in this worker process.
    monkeypatch.setenv("PREFECT_API_URL", "")
    monkeypatch.delenv("PREFECT_API_URL")
    from flows.refresh import refresh
    from flows.task_runners import make_task_runner

    def digest(table, *columns):
        row = f"concat_ws('|', {', '.join(columns)})"
        return f"select '{table}', count(*), md5(coalesce(string_agg({row}, ',' order by {row}), '')) from {table}"

    digest_sql = "\nunion all ".join([
        digest("offers", "offer_id", "billing_model", "usd_per_gpu_hour", "currency", "price_scope"),
        digest("quarantine", "file_sha256", "row_number", "reason_code"),
        digest("rankings", "workload_id", "rank", "offer_id", "total_cost_usd"),
        digest("ingest_manifest", "file_sha256", "status", "rows_in", "rows_accepted"),
    ])
    # The threads side is the session's sample refresh: run_refresh of the same bundled inputs with the
    # default (thread) runner, so refreshing them again here would only repeat it.
    threads = sample_warehouse
    dask = tmp_path / "dask" / "w.duckdb"
    state = refresh.with_options(task_runner=make_task_runner("dask"))(
        warehouse_path=str(dask), return_state=True)
    assert state.is_completed(), state.message
    assert query(dask, digest_sql) == query(threads, digest_sql)


def test_validate_host_deployment_runs_on_demand_against_a_real_ssh_host(prefect_server, tmp_path,
                                                                         sample_warehouse):
    import shutil

    from tests import fake_host
    from tests.sshd import make_keys, running_sshd
    from tests.probe.test_validate_host import EIGHT_GPU_OFFER

    warehouse = tmp_path / "w.duckdb"
    shutil.copy(sample_warehouse, warehouse)
    (tmp_path / "keys").mkdir()
    keys = make_keys(tmp_path / "keys")
    with running_sshd(tmp_path / "sshd", keys, fake_host.mi300x_host(tmp_path / "host")) as server:
        params = {"host": "127.0.0.1", "offer_id": EIGHT_GPU_OFFER, "user": server.user, "port": server.port,
                  "identity_file": str(server.identity_file), "known_hosts": str(server.known_hosts),
                  "warehouse_path": str(warehouse), "bench": False, "timeout_s": 60}
        result = subprocess.run(
            [PREFECT, "deployment", "run", "validate-host/validate-host", "--params", json.dumps(params),
             "--watch", "--watch-timeout", "240"],
            env=prefect_server, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=270)
    assert result.returncode == 0 and "Completed" in result.stdout, result.stdout + result.stderr
    [evidence] = list((tmp_path / "validations").glob("val-*.json"))
    record = json.loads(evidence.read_text())
    assert (record["verdict"], record["offer_id"]) == ("pass", EIGHT_GPU_OFFER)
