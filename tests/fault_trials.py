"""Shared pieces of the fault trials (tests/flows/test_faults*.py): a local Prefect server, the fork zygote,
the sample sources with one extra quote file, and the published warehouse's fingerprint."""
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import duckdb
import pytest
import yaml

from provider_eval.paths import DATA_DIR, SQL_DIR
from provider_eval.sql_compiled import compiled_checks

ROOT = Path(__file__).resolve().parent.parent
QUOTE_HEADER = "provider,offer_id,gpu_model,gpus_per_node,price,currency,price_unit,price_scope,billing_model,observed_at\n"


def _env(prefect_home: Path, api_url: str | None = None) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PREFECT_HOME": str(prefect_home), "DO_NOT_TRACK": "1",
           "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "PREFECT_LOGGING_LEVEL": "WARNING"}
    env.pop("PREFECT_API_URL", None)
    if api_url:
        env["PREFECT_API_URL"] = api_url
    return env


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def sources_with(folder: Path, extra: dict[str, Path]) -> Path:
    """The bundled sample sources (absolute paths) plus one quote-csv source per extra name."""
    return sources_file(folder / ("sources-" + "-".join(sorted(extra)) + ".yaml" if extra else "sources.yaml"), extra)


def sources_file(path: Path, extra: dict[str, Path]) -> Path:
    doc = yaml.safe_load((DATA_DIR / "sources.yaml").read_text(encoding="utf-8"))
    for s in doc["sources"]:
        s["path"] = str(DATA_DIR / s["path"])
    for name, quotes in extra.items():
        doc["sources"].append({"name": name, "kind": "quotes", "format": "quote-csv", "path": str(quotes),
                               "defaults": {"currency": "USD"}})
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def quote_file(folder: Path, name: str, price: str = "2.10") -> Path:
    path = folder / f"{name}.csv"
    path.write_text(QUOTE_HEADER + f"{name},{name}-mi300x-1,MI300X,1,{price},USD,hour,per_gpu,on_demand,"
                    "2026-01-15T00:00:00Z\n", encoding="utf-8")
    return path


def refresh_cmd(sources: Path, warehouse: Path) -> list[str]:
    return ["refresh", "--sources", str(sources), "--warehouse", str(warehouse)]


def fingerprint(warehouse: Path) -> dict:
    """What the published warehouse holds, per source and table: equal fingerprints = equal states."""
    with duckdb.connect(str(warehouse), read_only=True) as con:
        return {t: dict(con.execute(f"select source_name, count(*) from {t} group by 1").fetchall())
                for t in ("offer_history", "offers", "ingest_manifest", "quarantine")} | {
            "rankings": dict(con.execute("select provider, count(*) from rankings group by 1").fetchall())}


def assert_checks_pass(warehouse: Path) -> None:
    """Every data test of the SQL layer returns no rows on the published warehouse, opened read-only."""
    checks = compiled_checks(SQL_DIR)
    assert checks, "the SQL layer has data tests"
    with duckdb.connect(str(warehouse), read_only=True) as con:
        for name, body in sorted(checks.items()):
            assert con.execute(f"select count(*) from ({body})").fetchone()[0] == 0, name


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture(scope="module")
def refresh_env(tmp_path_factory):
    """One local Prefect server (127.0.0.1) for every refresh of this file: no per-run server start-up."""
    home = tmp_path_factory.mktemp("prefect-faults")
    port = _free_port()
    server = subprocess.Popen([sys.executable, "-m", "prefect", "server", "start", "--host", "127.0.0.1",
                               "--port", str(port)], env=_env(home), stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)
    api = f"http://127.0.0.1:{port}/api"
    deadline = time.monotonic() + 120
    while True:
        try:
            urllib.request.urlopen(f"{api}/health", timeout=2)
            break
        except OSError:
            assert server.poll() is None and time.monotonic() < deadline, "the Prefect server did not start"
            time.sleep(0.5)
    yield _env(home, api)
    os.killpg(server.pid, signal.SIGTERM)
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)


@pytest.fixture(scope="module")
def zygote(refresh_env):
    """A warm process that forks a fresh refresh per trial (imports paid once)."""
    # As a module from the root: run as a script, tests/ would be first on sys.path and tests/flows
    # would shadow the flows package.
    proc = subprocess.Popen([sys.executable, "-m", "tests.refresh_zygote"], cwd=ROOT,
                            env=refresh_env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"

    def start(args: list[str]) -> int:
        proc.stdin.write(json.dumps(args) + "\n")
        proc.stdin.flush()
        return int(proc.stdout.readline())
    yield start
    proc.stdin.close()
    proc.wait(timeout=30)


def run_to_end(start, args: list[str], timeout_s: float = 120) -> float:
    began = time.monotonic()
    pid = start(args)
    while alive(pid):
        assert time.monotonic() - began < timeout_s, "refresh did not finish"
        time.sleep(0.05)
    return time.monotonic() - began
