"""Choose where the refresh's parallel tasks run: threads here, or a Dask / Ray cluster."""
import logging
import os

from prefect.task_runners import ThreadPoolTaskRunner

from provider_eval import quiet_exit
from provider_eval.errors import ProviderEvalError

RUNNERS = ("threads", "dask", "ray")
# Every process that runs our tasks ends with DuckDB's benign nanobind "leaked" report unless its
# teardown is quiet (provider_eval/quiet_exit.py); worker processes print to the user's terminal.
DASK_WORKER_PRELOAD = "provider_eval.quiet_exit"  # its dask_setup runs as each worker we start comes up
RAY_WORKER_SETUP_HOOK = "provider_eval.quiet_exit.install"  # Ray calls it in each worker process of the job


class QuietThreadPoolTaskRunner(ThreadPoolTaskRunner):
    """Prefect's thread pool; the process it runs in (a deployment's flow run too) gets the quiet teardown."""

    def __enter__(self):
        quiet_exit.install()
        return super().__enter__()


def share_ephemeral_api_with_workers() -> None:
    """Worker processes must report to the same Prefect API as the flow.

    With no PREFECT_API_URL, Prefect starts a temporary server inside this process's client; a
    Dask or Ray worker process would try to start its own and fail. Start the temporary server
    now (the client reuses this same instance) and hand its URL to the workers via the environment.
    """
    if os.environ.get("PREFECT_API_URL"):
        return
    from prefect.server.api.server import SubprocessASGIServer

    server = SubprocessASGIServer()
    server.start()
    os.environ["PREFECT_API_URL"] = server.api_url


def make_task_runner(name: str = "threads", address: str | None = None, workers: int | None = None):
    """A Prefect task runner by name; `address` joins an existing cluster instead of starting one."""
    if name == "threads":
        # Bounded: one thread per file would mean thousands of threads at scale (measured by make bench),
        # and parsing is CPU-bound polars work that gains nothing past a few threads per core.
        return QuietThreadPoolTaskRunner(max_workers=workers or 2 * (os.cpu_count() or 1))
    if name == "dask":
        # Dask's own INFO chatter (scheduler/nanny start and stop) is not the user's business;
        # set before distributed is imported so worker processes inherit it too.
        os.environ.setdefault("DASK_DISTRIBUTED__LOGGING__DISTRIBUTED", "warning")
        from prefect_dask import DaskTaskRunner

        logging.getLogger("distributed").setLevel(logging.WARNING)
        share_ephemeral_api_with_workers()
        if address:
            return DaskTaskRunner(address=address)  # its workers are the cluster's: their output is not ours
        # Processes, not threads: parsing is CPU-bound Python/polars work.
        return DaskTaskRunner(cluster_kwargs={"n_workers": workers or 2, "threads_per_worker": 1,
                                              "processes": True, "dashboard_address": None,
                                              "preload": [DASK_WORKER_PRELOAD]})
    if name == "ray":
        try:
            from prefect_ray import RayTaskRunner
        except ImportError:
            raise ProviderEvalError(
                "the ray task runner needs the optional extra: pip install 'provider-eval[ray]'") from None
        share_ephemeral_api_with_workers()
        # Ray streams its workers' output to this process, on a cluster it starts or one it joins alike.
        init_kwargs = {"runtime_env": {"worker_process_setup_hook": RAY_WORKER_SETUP_HOOK}}
        return RayTaskRunner(address=address, init_kwargs=init_kwargs)
    raise ProviderEvalError(f"unknown task runner {name!r}; choose one of {', '.join(RUNNERS)}")
