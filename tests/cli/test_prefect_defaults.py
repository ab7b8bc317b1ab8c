"""The CLI's Prefect defaults: a patient ephemeral-server start that a user can still override."""
import os
import subprocess
import sys

VARIABLE = "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS"


def _timeout_seen_by_prefect(env_value: str | None) -> str:
    env = {k: v for k, v in os.environ.items() if k != VARIABLE}
    if env_value is not None:
        env[VARIABLE] = env_value
    code = ("import provider_eval.cli; "
            "from prefect.settings import PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS as s; "
            "print(s.value())")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_cli_waits_90_s_for_the_ephemeral_server_unless_told_otherwise():
    assert _timeout_seen_by_prefect(None) == "90"
    assert _timeout_seen_by_prefect("7") == "7"
