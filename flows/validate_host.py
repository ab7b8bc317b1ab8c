"""The validate_host flow: probe a rented host over SSH, decide against the quote, record the evidence."""
from pathlib import Path

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.states import Failed

from flows.probe import validate
from flows.task_runners import make_task_runner
from provider_eval.errors import ProviderEvalError
from provider_eval.paths import DEFAULT_WAREHOUSE


@task(cache_policy=NO_CACHE)
def probe_and_decide(host: str, offer_id: str, user: str, port: int, identity_file: str, known_hosts: str,
                     warehouse_path: str, timeout_s: float, connect_timeout_s: float, bench: bool,
                     deep: bool, workload: str | None = None, workload_params: dict | None = None,
                     workload_timeout_s: float = 1800) -> dict:
    """One validation; deadlines come from the SSH client, not from Prefect (it cannot interrupt blocking I/O)."""
    return validate.validate_host(host, offer_id, user, port, Path(identity_file), Path(known_hosts),
                                  Path(warehouse_path), timeout_s=timeout_s, connect_timeout_s=connect_timeout_s,
                                  bench=bench, deep=deep, workload=workload, workload_params=workload_params,
                                  workload_timeout_s=workload_timeout_s)


@flow(name="validate-host", log_prints=False, task_runner=make_task_runner("threads"))
def validate_host(
    host: str,
    offer_id: str,
    user: str = "root",
    port: int = 22,
    identity_file: str = "~/.ssh/id_ed25519",
    known_hosts: str = "~/.ssh/known_hosts",
    warehouse_path: str = str(DEFAULT_WAREHOUSE),
    timeout_s: float = 300,
    connect_timeout_s: float = 10,
    bench: bool = True,
    deep: bool = False,
    workload: str | None = None,
    workload_params: dict | None = None,
    workload_timeout_s: float = 1800,
):
    """Validate one host against one offer; the evidence record is the result (loaded by the next refresh)."""
    try:
        record = probe_and_decide(host, offer_id, user, port, str(Path(identity_file).expanduser()),
                                  str(Path(known_hosts).expanduser()),
                                  str(Path(warehouse_path).expanduser().absolute()), timeout_s,
                                  connect_timeout_s, bench, deep, workload, workload_params, workload_timeout_s)
    except ProviderEvalError as exc:
        return Failed(message=str(exc), data=exc)
    get_run_logger().info("%s vs %s: %s (%s)", host, offer_id, record["verdict"], record["evidence_path"])
    return record
