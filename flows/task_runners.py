"""Choose where the refresh's parallel tasks run: threads here, or a Dask / Ray cluster."""
import logging
import os

from prefect.task_runners import ThreadPoolTaskRunner

from provider_eval.errors import ProviderEvalError

RUNNERS = ("threads", "dask", "ray")


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
        return ThreadPoolTaskRunner(max_workers=workers or 2 * (os.cpu_count() or 1))
    if name == "dask":
        # Dask's own INFO chatter (scheduler/nanny start and stop) is not the user's business;
        # set before distributed is imported so worker processes inherit it too.
        os.environ.setdefault("DASK_DISTRIBUTED__LOGGING__DISTRIBUTED", "warning")
        from prefect_dask import DaskTaskRunner

        logging.getLogger("distributed").setLevel(logging.WARNING)
        share_ephemeral_api_with_workers()
        if address:
            return DaskTaskRunner(address=address)
        # Processes, not threads: parsing is CPU-bound Python/polars work.
        return DaskTaskRunner(cluster_kwargs={"n_workers": workers or 2, "threads_per_worker": 1,
                                              "processes": True, "dashboard_address": None})
    if name == "ray":
        try:
            from prefect_ray import RayTaskRunner
        except ImportError:
            raise ProviderEvalError(
                "the ray task runner needs the optional extra: pip install 'provider-eval[ray]'") from None
        share_ephemeral_api_with_workers()
        return RayTaskRunner(address=address) if address else RayTaskRunner()
    raise ProviderEvalError(f"unknown task runner {name!r}; choose one of {', '.join(RUNNERS)}")
