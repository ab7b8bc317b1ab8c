"""Fault trials: two refreshes at once, a full disk, a torn landing index, leftover builds — the published warehouse survives."""
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import duckdb

from tests.fault_trials import QUOTE_HEADER, ROOT, assert_checks_pass, fingerprint, quote_file, refresh_cmd, sources_with
from tests.fault_trials import refresh_env  # noqa: F401  (fixture)


def test_two_refreshes_at_once_both_finish(tmp_path, refresh_env):
    """Started together, both refreshes exit 0 (the second waits for the lock); one consistent warehouse;
    a reader querying throughout never sees a lock error."""
    warehouse = tmp_path / "wh" / "provider_eval.duckdb"
    sources = sources_with(tmp_path, {"both": quote_file(tmp_path, "both")})
    env = refresh_env
    procs = [subprocess.Popen([sys.executable, "-m", "provider_eval", *refresh_cmd(sources, warehouse)],
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
        first = subprocess.run([sys.executable, "-m", "provider_eval", *refresh_cmd(sources_with(tmp_path, {}), warehouse)],
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
                                 *refresh_cmd(sources_with(tmp_path, {"big": big}), warehouse)],
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
    first = land_file("s", quote_file(tmp_path, "one"), landing, now)
    with open(landing / INDEX_NAME, "a", encoding="utf-8") as fh:
        fh.write('{"source_name": "s", "file_sha2')  # the torn write
    assert read_index(landing) == [first]
    second = land_file("s", quote_file(tmp_path, "two"), landing, now)
    assert read_index(landing) == [first, second]


def test_sweep_removes_only_this_warehouses_builds(tmp_path):
    """Leftover builds of this warehouse go; another warehouse's build in the same folder stays."""
    from flows.refresh import _sweep_builds

    builds = tmp_path / ".build"
    (builds / "provider_eval.duckdb.dead").mkdir(parents=True)
    (builds / "provider_eval.duckdb.dead" / "warehouse.duckdb").write_text("x")
    (builds / "other.duckdb.busy").mkdir()
    (builds / "provider_eval.duckdb.retired-0f").write_text("a replaced warehouse a killed refresh left")
    _sweep_builds(builds, "provider_eval.duckdb")
    assert [p.name for p in builds.iterdir()] == ["other.duckdb.busy"]
