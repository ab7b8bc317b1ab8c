"""Fault-trial helper: import the refresh once, then fork a fresh `provider-eval refresh` per stdin line.

Each line is a JSON list of CLI arguments; the forked child's pid is printed back. Children are
reaped automatically (SIGCHLD ignored), so a test can kill -9 one and poll it with kill(pid, 0).
"""
import json
import os
import signal
import sys

import great_expectations  # noqa: F401  (the slow imports, paid once for every trial)

import flows.refresh  # noqa: F401
import provider_eval.cli

signal.signal(signal.SIGCHLD, signal.SIG_IGN)
print("ready", flush=True)
for line in sys.stdin:
    args = json.loads(line)
    pid = os.fork()
    if pid == 0:
        os.setsid()  # its own process group: the trial kills the refresh and anything it started
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, 0)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        sys.argv = ["provider-eval", *args]
        code = 0
        try:
            provider_eval.cli.main()
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        os._exit(code)
    print(pid, flush=True)
