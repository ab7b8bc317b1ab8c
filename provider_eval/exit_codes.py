"""The one exit-code table every command uses (shown in each command's --help and in the docs)."""
from enum import IntEnum


class ExitCode(IntEnum):
    """What a scheduler or script can rely on, for every provider-eval command."""

    OK = 0             # done: fits / supported / pass / published with every input accepted
    NEGATIVE = 1       # a clear "no": does not fit, unsupported, the host failed validation
    USAGE = 2          # the command, an option, the SQL or a config file (sources.yaml, workloads.yaml) is wrong
    INCONCLUSIVE = 3   # no answer either way: compatibility unknown, memory fit unknown, host inconclusive
    PARTIAL = 4        # refresh published, but a whole input file was rejected or a fetch failed
    FAILED = 5         # nothing done: refresh published nothing, no warehouse, host unreachable, disk full


MEANING = {
    ExitCode.OK: "ok (fits, supported, pass, published with every file accepted)",
    ExitCode.NEGATIVE: "negative answer (does not fit, unsupported, host failed validation)",
    ExitCode.USAGE: "usage or configuration error (bad option, SQL, sources.yaml, workloads.yaml)",
    ExitCode.INCONCLUSIVE: "unknown or inconclusive",
    ExitCode.PARTIAL: "refresh published but rejected a whole file or a fetch failed (--allow-rejected: 0)",
    ExitCode.FAILED: "failed, nothing done (refresh published nothing, no warehouse, host unreachable, "
                     "Prefect API or disk trouble)",
}

# Click keeps the text as one paragraph unless it starts with \b (no rewrapping of the table).
HELP = "\b\nExit codes (every command):\n" + "\n".join(f"  {int(c)}  {MEANING[c]}" for c in ExitCode)
