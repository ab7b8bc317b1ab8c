"""A process that used DuckDB ends without nanobind's teardown 'leak' report: the CLI and the Dask workers we start."""
import os
import subprocess
import sys

from provider_eval.paths import PROJECT_ROOT

# The shape that makes DuckDB 2.0's nanobind report 'leaks': DuckDB objects still referenced when the
# interpreter tears down (here from a daemon thread, as Prefect's and Dask's threads are at exit).
HOLD_DUCKDB_TILL_EXIT = """
import threading, time
def hold_duckdb_till_exit():
    ready = threading.Event()
    def hold():
        import duckdb
        con = duckdb.connect()
        kept = con.sql("select 1 as a").types  # noqa: F841
        ready.set()
        time.sleep(600)
    threading.Thread(target=hold, daemon=True).start()
    ready.wait(60)
    return "held"
"""
LEAK_REPORT = "nanobind: leaked"


def python(code: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=PROJECT_ROOT,
                          env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT), **env})


def test_the_report_it_hides_is_real():
    # Without the quiet exit the report is printed: when a DuckDB release stops printing it, quiet_exit can go.
    done = python(HOLD_DUCKDB_TILL_EXIT + "hold_duckdb_till_exit()")
    assert LEAK_REPORT in done.stderr, done.stderr


def test_the_quiet_exit_hides_only_the_teardown():
    done = python("import atexit, sys\nfrom provider_eval import quiet_exit\nquiet_exit.install()\n"
                  "atexit.register(lambda: print('said at exit', file=sys.stderr))\n"
                  + HOLD_DUCKDB_TILL_EXIT + "hold_duckdb_till_exit()\nprint('said before exit', file=sys.stderr)")
    assert done.returncode == 0 and done.stderr == "said before exit\nsaid at exit\n", done.stderr


def test_the_cli_entry_point_ends_quietly():
    done = python(HOLD_DUCKDB_TILL_EXIT + "hold_duckdb_till_exit()\nimport sys\n"
                  "sys.argv = ['provider-eval', 'check-fit', '--model', 'llama-3.1-70b', '--gpu', 'MI300X',"
                  " '--gpus', '4']\n"
                  "from provider_eval.cli import main\nmain()")
    assert done.returncode == 0 and "fits" in done.stdout, done.stdout + done.stderr
    assert done.stderr == "", done.stderr


DASK_WORKER_HOLDS_DUCKDB = """
from flows import task_runners
task_runners.DASK_WORKER_PRELOAD = {preload!r}
runner = task_runners.make_task_runner("dask", workers=1)
with runner:
    print(runner.client.submit(hold_duckdb_till_exit).result())
"""


def test_dask_workers_we_start_end_quietly():
    # A worker process prints to our stderr; its start-up (the task runner's preload) makes its exit quiet.
    # The API URL is never called (no Prefect task runs here): it only keeps the runner from starting a server.
    env = {"PREFECT_API_URL": "http://127.0.0.1:9/api"}
    quiet = python(HOLD_DUCKDB_TILL_EXIT + DASK_WORKER_HOLDS_DUCKDB.format(preload="provider_eval.quiet_exit"), **env)
    assert quiet.stdout == "held\n" and LEAK_REPORT not in quiet.stderr, quiet.stdout + quiet.stderr
    # The same worker without that start-up hook prints the report: the hook is what keeps it quiet.
    loud = python(HOLD_DUCKDB_TILL_EXIT + DASK_WORKER_HOLDS_DUCKDB.format(preload="os"), **env)
    assert loud.stdout == "held\n" and LEAK_REPORT in loud.stderr, loud.stdout + loud.stderr


def test_a_process_running_refresh_tasks_on_threads_ends_quietly():
    # A deployment's flow run is Prefect's process, not the CLI's: the thread runner's start-up quiets its exit.
    done = python(HOLD_DUCKDB_TILL_EXIT + "hold_duckdb_till_exit()\nfrom flows.task_runners import make_task_runner\n"
                  "with make_task_runner('threads'):\n    pass")
    assert done.returncode == 0 and LEAK_REPORT not in done.stderr, done.stderr
