"""The refresh command starts Prefect's temporary API server early (flows/task_runners.start_ephemeral_api)."""
from prefect.client.orchestration import get_client
from prefect.server.api.server import SubprocessASGIServer

from flows.task_runners import start_ephemeral_api


def test_the_flow_client_uses_the_server_started_early():
    """Once the wait returns, the server is up and a flow's client talks to that same server."""
    start_ephemeral_api()()
    server = SubprocessASGIServer()
    assert server.running and server.server_process is not None and server.server_process.poll() is None
    with get_client(sync_client=True) as client:
        assert str(client.api_url).rstrip("/") == server.api_url
        assert client.api_healthcheck() is None  # None: healthy


def test_nothing_is_started_when_an_api_is_configured(monkeypatch):
    """With PREFECT_API_URL set the flow talks to that API: no temporary server is started."""
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:9/api")
    before = dict(SubprocessASGIServer._instances)
    assert start_ephemeral_api()() is None
    assert SubprocessASGIServer._instances == before
