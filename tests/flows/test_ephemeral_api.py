"""The refresh command starts Prefect's temporary API server first thing (flows/ephemeral_api.py).

Each case runs in a fresh Python process, as the command does: Prefect reads its settings once,
and the pytest process already has them.
"""
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent


def _run(code: str, env: dict | None = None) -> dict:
    """Run code in a fresh interpreter (repository on the path) with no API configured unless env
    says so (an earlier test in this process may have set one); it prints one JSON object."""
    inherited = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=180,
                          env={**inherited, **(env or {})})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def _listening(url: str) -> bool:
    host, port = url.split("//")[1].split("/")[0].split(":")
    with socket.socket() as s:
        return s.connect_ex((host, int(port))) == 0


def test_the_flow_client_uses_the_server_started_early_and_it_stops_at_exit():
    """Once the wait returns the server is up, the flow's client talks to it, Prefect's server code
    was never imported here, and the server is gone when the process exits."""
    got = _run("""
import json, sys
from flows.ephemeral_api import start_ephemeral_api
start_ephemeral_api()()
from prefect.client.orchestration import get_client
with get_client(sync_client=True) as client:
    print(json.dumps({"url": str(client.api_url).rstrip("/"), "healthy": client.api_healthcheck() is None,
                      "server_code_here": "prefect.server.api.server" in sys.modules}))
""")
    assert got["url"].startswith("http://127.0.0.1:") and got["url"].endswith("/api")
    assert got["healthy"] and not got["server_code_here"]
    assert not _listening(got["url"])


def test_nothing_is_started_when_an_api_is_configured():
    """With PREFECT_API_URL set the flow talks to that API: no server process is started."""
    got = _run("""
import json, os, subprocess
def refuse(*args, **kwargs):
    raise AssertionError("a server was started")
subprocess.Popen = refuse
from flows.ephemeral_api import start_ephemeral_api
start_ephemeral_api()()
from prefect.settings import PREFECT_API_URL
print(json.dumps({"url": PREFECT_API_URL.value()}))
""", {"PREFECT_API_URL": "http://127.0.0.1:9/api"})
    assert got["url"] == "http://127.0.0.1:9/api"


def test_a_server_that_cannot_start_leaves_the_settings_as_they_were():
    """Its port taken, the server exits; the wait stops waiting, and no API stays configured (the
    flow's client then starts Prefect's own temporary server, as without this early start)."""
    got = _run("""
import json, os, socket
from flows import ephemeral_api
taken = socket.socket()
taken.bind(("127.0.0.1", 0))
ephemeral_api._free_port = lambda: taken.getsockname()[1]
ephemeral_api.start_ephemeral_api()()
from prefect.settings import PREFECT_API_URL
print(json.dumps({"url": PREFECT_API_URL.value(), "env": os.environ.get("PREFECT_API_URL")}))
""")
    assert got == {"url": None, "env": None}


def test_the_server_stops_when_the_process_that_started_it_is_killed():
    """SIGKILL runs no atexit: the kernel's parent-death signal stops the server (a killed refresh used
    to leave it listening for good)."""
    import signal
    import time

    inherited = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    starter = subprocess.Popen([sys.executable, "-c", """
import os, sys, time
from flows.ephemeral_api import start_ephemeral_api
start_ephemeral_api()()
children = open(f"/proc/self/task/{os.getpid()}/children").read().split()
print(os.environ["PREFECT_API_URL"], *children, flush=True)
time.sleep(600)
"""], cwd=ROOT, stdout=subprocess.PIPE, text=True, env=inherited)
    server_pids = []
    try:
        url, *server_pids = starter.stdout.readline().split()
        assert url.startswith("http://127.0.0.1:") and _listening(url) and server_pids
        starter.send_signal(signal.SIGKILL)
        starter.wait(timeout=30)
        deadline = time.monotonic() + 30
        while _listening(url) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _listening(url), "the server outlived the process that started it"
    finally:
        starter.kill()
        starter.wait()
        for pid in server_pids:  # a server that outlived the test must not outlive the test run too
            try:
                os.kill(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass
