"""Start Prefect's temporary API server first thing, while the refresh's modules import.

With no API configured, a flow's first API call starts a temporary server: Prefect's own
SubprocessASGIServer runs uvicorn over `prefect.server.api.server:create_app` in a process of its
own and waits for /health. Importing that class imports Prefect's whole server (FastAPI,
SQLAlchemy, every route: ~3 s on 2 cores) into the refresh's process, which only talks HTTP to it.
So the same server is started here with the same command and environment, from a process that
has imported only Prefect's settings, and the settings are pointed at it, as if configured.
"""
import atexit
import importlib.util
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

# What SubprocessASGIServer gives its server: no UI, and the server knows it is temporary.
SERVER_ENV = {"PREFECT_UI_ENABLED": "0", "PREFECT__SERVER_EPHEMERAL": "1", "PREFECT__SERVER_FINAL": "1"}
STOP_WAIT_SECONDS = 5
# Runs uvicorn as `python -m uvicorn` does, after asking the kernel (Linux) to send the server SIGTERM
# when the process that started it dies: a refresh killed with SIGKILL runs no atexit, and its server
# used to stay up for good. argv[1] is that process's pid: if it is already gone, nothing is served.
SERVE_UNTIL_PARENT_DIES = """
import os, runpy, signal, sys
parent = int(sys.argv.pop(1))
if sys.platform.startswith("linux"):
    import ctypes
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
if os.getppid() != parent:
    sys.exit(0)
runpy.run_module("uvicorn", run_name="__main__", alter_sys=True)
"""


def start_ephemeral_api() -> Callable[[], None]:
    """Start the temporary server now, in the background; returns a wait-until-it-is-up.

    Nothing is started when an API is configured (PREFECT_API_URL, in the environment or the
    profile). A server that does not come up is stopped and the settings restored: the flow's own
    start then tries Prefect's way and reports why it cannot, as it would have. Call it from the
    thread that lives as long as the refresh (the main one): the kernel signals the server when the
    thread that started it ends.
    """
    from prefect.settings import PREFECT_API_URL, get_current_settings

    if PREFECT_API_URL.value():
        return lambda: None
    port = _free_port()
    env = {**os.environ, **get_current_settings().to_environment_variables(exclude_unset=True), **SERVER_ENV}
    site_packages = Path(importlib.util.find_spec("prefect").origin).parent.parent
    server = subprocess.Popen(
        [sys.executable, "-c", SERVE_UNTIL_PARENT_DIES, str(os.getpid()), "--app-dir", str(site_packages), "--factory",
         "prefect.server.api.server:create_app", "--host", "127.0.0.1", "--port", str(port),
         "--log-level", "error", "--lifespan", "on"], env=env)
    atexit.register(_stop, server)
    url = f"http://127.0.0.1:{port}/api"
    _use_api(url)

    def wait() -> None:
        if not _healthy(url, server):
            _stop(server)
            _use_api(None)

    return wait


def _free_port() -> int:
    """A loopback port nothing listens on now (the OS picks it)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _use_api(url: str | None) -> None:
    """Point this process's Prefect settings (and the worker processes it starts) at url, or at none."""
    import prefect.context

    if url:
        os.environ["PREFECT_API_URL"] = url
    else:
        os.environ.pop("PREFECT_API_URL", None)
    prefect.context.refresh_global_settings_context()


def _healthy(url: str, server: subprocess.Popen) -> bool:
    """Whether the server answers /health within Prefect's ephemeral start-up timeout."""
    import httpx
    from prefect.settings import PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS

    deadline = time.monotonic() + PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS.value()
    with httpx.Client() as client:
        while time.monotonic() < deadline and server.poll() is None:
            try:
                if client.get(f"{url}/health").status_code == 200:
                    return True
            except httpx.TransportError:
                pass
            time.sleep(0.05)
    return False


def _stop(server: subprocess.Popen) -> None:
    """Stop the server (at exit, or when it never came up)."""
    if server.poll() is not None:
        return
    server.terminate()
    try:
        server.wait(timeout=STOP_WAIT_SECONDS)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()
