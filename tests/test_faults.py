"""Fault trials: kill -9 mid-refresh, two refreshes at once, a full disk — the published warehouse survives."""
import json
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import duckdb
import pytest
import yaml

from provider_eval.paths import DATA_DIR, SQL_DIR
from provider_eval.sql_compiled import compiled_checks

ROOT = Path(__file__).resolve().parent.parent
KILL_TRIALS = 20
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


def _sources(folder: Path, extra: dict[str, Path]) -> Path:
    """The bundled sample sources (absolute paths) plus one quote-csv source per extra name."""
    return _sources_file(folder / ("sources-" + "-".join(sorted(extra)) + ".yaml" if extra else "sources.yaml"), extra)


def _sources_file(path: Path, extra: dict[str, Path]) -> Path:
    doc = yaml.safe_load((DATA_DIR / "sources.yaml").read_text(encoding="utf-8"))
    for s in doc["sources"]:
        s["path"] = str(DATA_DIR / s["path"])
    for name, quotes in extra.items():
        doc["sources"].append({"name": name, "kind": "quotes", "format": "quote-csv", "path": str(quotes),
                               "defaults": {"currency": "USD"}})
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def _quote_file(folder: Path, name: str, price: str = "2.10") -> Path:
    path = folder / f"{name}.csv"
    path.write_text(QUOTE_HEADER + f"{name},{name}-mi300x-1,MI300X,1,{price},USD,hour,per_gpu,on_demand,"
                    "2026-01-15T00:00:00Z\n", encoding="utf-8")
    return path


def _refresh_cmd(sources: Path, warehouse: Path) -> list[str]:
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


def _alive(pid: int) -> bool:
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
    proc = subprocess.Popen([sys.executable, str(ROOT / "tests" / "refresh_zygote.py")], cwd=ROOT,
                            env=refresh_env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"

    def start(args: list[str]) -> int:
        proc.stdin.write(json.dumps(args) + "\n")
        proc.stdin.flush()
        return int(proc.stdout.readline())
    yield start
    proc.stdin.close()
    proc.wait(timeout=30)


def _run_to_end(start, args: list[str], timeout_s: float = 120) -> float:
    began = time.monotonic()
    pid = start(args)
    while _alive(pid):
        assert time.monotonic() - began < timeout_s, "refresh did not finish"
        time.sleep(0.05)
    return time.monotonic() - began


def test_kill_9_leaves_previous_or_new_warehouse(zygote, tmp_path):
    """≥ 20 refreshes killed at random moments: the warehouse is always the old or the new one, whole."""
    warehouse = tmp_path / "wh" / "provider_eval.duckdb"
    base_sources = _sources(tmp_path, {})
    duration_s = _run_to_end(zygote, _refresh_cmd(base_sources, warehouse))
    base = fingerprint(warehouse)
    rng = random.Random(11)
    outcomes = {"previous": 0, "new": 0}
    ranked_per_offer = None
    for trial in range(KILL_TRIALS):
        name = f"trial-{trial:02d}"
        sources = _sources(tmp_path, {name: _quote_file(tmp_path, name)})
        before = fingerprint(warehouse)
        new = {t: ({**v, name: 1} if t in ("offer_history", "offers", "ingest_manifest") else v)
               for t, v in base.items()}
        # The trial's one offer is ranked for as many workloads each time (learned from the first publish).
        new["rankings"] = {**base["rankings"], name: ranked_per_offer} if ranked_per_offer else base["rankings"]
        pid = zygote(_refresh_cmd(sources, warehouse))
        time.sleep(rng.uniform(0, duration_s))
        if _alive(pid):
            os.killpg(pid, signal.SIGKILL)
        while _alive(pid):
            time.sleep(0.02)
        after = fingerprint(warehouse)
        if ranked_per_offer is None and after != before and name in after["rankings"]:
            ranked_per_offer = after["rankings"][name]
            new["rankings"] = {**base["rankings"], name: ranked_per_offer}
        assert after in (before, new), f"trial {trial}: a mixed state {after}"
        assert_checks_pass(warehouse)
        outcomes["new" if after == new else "previous"] += 1
    # The kills landed both before and after publishing (a trial that never lets the swap happen proves little).
    assert outcomes["previous"] > 0 and outcomes["new"] > 0, outcomes
    # And the refresh still works after all that debris: killed builds are swept, the landing index reads.
    _run_to_end(zygote, _refresh_cmd(base_sources, warehouse))
    assert fingerprint(warehouse) == base
    assert not [p for p in (warehouse.parent / ".build").iterdir()]


def test_two_refreshes_at_once_both_finish(tmp_path, refresh_env):
    """Started together, both refreshes exit 0 (the second waits for the lock); one consistent warehouse;
    a reader querying throughout never sees a lock error."""
    warehouse = tmp_path / "wh" / "provider_eval.duckdb"
    sources = _sources(tmp_path, {"both": _quote_file(tmp_path, "both")})
    env = refresh_env
    procs = [subprocess.Popen([sys.executable, "-m", "provider_eval", *_refresh_cmd(sources, warehouse)],
                              cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    reader_errors, reads = [], [0]
    stop = threading.Event()

    def read_in_a_loop():  # an analyst querying the published warehouse throughout
        while not stop.is_set():
            if warehouse.exists():
                try:
                    with duckdb.connect(str(warehouse), read_only=True) as con:
                        con.execute("select count(*) from rankings").fetchone()
                    reads[0] += 1
                except duckdb.Error as exc:
                    reader_errors.append(str(exc))
            time.sleep(0.01)
    reader = threading.Thread(target=read_in_a_loop)
    reader.start()
    try:
        results = [p.communicate(timeout=180) for p in procs]
    finally:
        stop.set()
        reader.join()
    assert reader_errors == [] and reads[0] > 0
    for p, (out, errtext) in zip(procs, results):
        assert p.returncode == 0, errtext
        assert "published" in errtext
    fp = fingerprint(warehouse)
    assert fp["offer_history"]["both"] == 1 and fp["ingest_manifest"]["both"] == 1
    assert_checks_pass(warehouse)
    assert not list((warehouse.parent / ".build").iterdir())


def _size_limited_dir(path: Path, size: str):
    """A small filesystem: a tmpfs of `size` (root), else None."""
    path.mkdir(parents=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                          capture_output=True, text=True)
    return done.returncode == 0


def test_disk_full_keeps_previous_warehouse(tmp_path, refresh_env):
    """A refresh that runs out of disk fails with a clear error; the published warehouse is untouched."""
    disk = tmp_path / "disk"
    mounted = _size_limited_dir(disk, "48m")
    env = refresh_env
    warehouse = disk / "provider_eval.duckdb"
    try:
        first = subprocess.run([sys.executable, "-m", "provider_eval", *_refresh_cmd(_sources(tmp_path, {}), warehouse)],
                               cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
        assert first.returncode == 0, first.stderr
        before = fingerprint(warehouse)
        # An input larger than the space left: landing its copy cannot fit.
        big = tmp_path / "big.csv"
        row = "big,big-1,MI300X,1,2.10,USD,hour,per_gpu,on_demand,2026-01-15T00:00:00Z\n"
        big.write_text(QUOTE_HEADER + row * 800_000, encoding="utf-8")
        preexec = None
        if not mounted:  # not root: a file-size limit on the refresh stands in for the full disk
            import resource

            def preexec():
                signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
                resource.setrlimit(resource.RLIMIT_FSIZE, (4 << 20, 4 << 20))
        second = subprocess.run([sys.executable, "-m", "provider_eval",
                                 *_refresh_cmd(_sources(tmp_path, {"big": big}), warehouse)],
                                cwd=ROOT, env=env, capture_output=True, text=True, timeout=180, preexec_fn=preexec)
        assert second.returncode != 0
        # The last words the user sees say what happened and that nothing changed.
        final = second.stderr[second.stderr.rindex("error: refresh failed"):]
        assert ("No space left on device" in final or "too large" in final) and "unchanged" in final, second.stderr
        # One line, no traceback before it (--verbose shows them), and the documented "nothing published" code.
        assert "Traceback" not in second.stderr and len(final.strip().splitlines()) == 1, second.stderr
        assert second.returncode == 5
        assert fingerprint(warehouse) == before
        assert_checks_pass(warehouse)
        assert not list(disk.rglob("*.part")), "a half-copied landing file was left behind"
    finally:
        if mounted:
            subprocess.run(["umount", "-l", str(disk)], check=False)


def test_landing_index_survives_a_torn_last_line(tmp_path):
    """A refresh killed mid-append leaves half a line: the index still reads and the next append starts clean."""
    import datetime as dt

    from flows.ingest.land import INDEX_NAME, land_file, read_index

    landing = tmp_path / "landing"
    now = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    first = land_file("s", _quote_file(tmp_path, "one"), landing, now)
    with open(landing / INDEX_NAME, "a", encoding="utf-8") as fh:
        fh.write('{"source_name": "s", "file_sha2')  # the torn write
    assert read_index(landing) == [first]
    second = land_file("s", _quote_file(tmp_path, "two"), landing, now)
    assert read_index(landing) == [first, second]


def test_sweep_removes_only_this_warehouses_builds(tmp_path):
    """Leftover builds of this warehouse go; another warehouse's build in the same folder stays."""
    from flows.refresh import _sweep_builds

    builds = tmp_path / ".build"
    (builds / "provider_eval.duckdb.dead").mkdir(parents=True)
    (builds / "provider_eval.duckdb.dead" / "warehouse.duckdb").write_text("x")
    (builds / "other.duckdb.busy").mkdir()
    _sweep_builds(builds, "provider_eval.duckdb")
    assert [p.name for p in builds.iterdir()] == ["other.duckdb.busy"]
