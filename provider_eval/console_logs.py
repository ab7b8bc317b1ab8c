"""What a failing command shows: one line on stderr by default, Prefect's logs and tracebacks with --verbose."""
import logging
import os

from rich.markup import escape as _rich_escape

VERBOSE_ENV = "PROVIDER_EVAL_VERBOSE"


def verbose() -> bool:
    """True when the user asked for detail (--verbose, or PROVIDER_EVAL_VERBOSE=1 for any command)."""
    return os.environ.get(VERBOSE_ENV, "") not in ("", "0", "false")


def escape(text: str) -> str:
    """Text shown through rich with its brackets literal (a message is never console markup)."""
    return _rich_escape(text)


class _NoFailureReports(logging.Filter):
    """Drop Prefect's own failure reports (error records, tracebacks): the CLI prints the reason once."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name.startswith("prefect") and record.levelno >= logging.ERROR:
            return False
        # A warning may carry a traceback (e.g. a retried task): keep its one line only.
        record.exc_info, record.exc_text, record.stack_info = None, None, None
        return True


def quiet_tracebacks() -> None:
    """Unless verbose, keep Prefect's console output to warnings of one line each (call after importing prefect)."""
    if verbose():
        return
    import prefect  # noqa: F401 - its import configures the console handler this filters

    quiet = _NoFailureReports()
    for handler in logging.getLogger().handlers:
        if not any(isinstance(f, _NoFailureReports) for f in handler.filters):
            handler.addFilter(quiet)


def one_line(message: str) -> str:
    """A multi-line failure message on one line (its lines joined), for schedulers' logs and people alike."""
    return " ".join(part.strip() for part in message.splitlines() if part.strip())


def describe(exc: BaseException) -> str:
    """An unexpected exception as one sentence the user can act on."""
    text = one_line(str(exc))
    if isinstance(exc, RuntimeError) and text.startswith("Failed to reach API at"):
        url = text.removeprefix("Failed to reach API at").strip()
        cause = one_line(str(exc.__cause__)) if exc.__cause__ else "no answer"
        return (f"cannot reach the Prefect API at {url} (PREFECT_API_URL): {cause}; start that server, or unset "
                "PREFECT_API_URL to run on a temporary local one. Nothing was published.")
    if isinstance(exc, OSError) and exc.strerror:
        where = f": {exc.filename}" if exc.filename else ""
        return f"{exc.strerror}{where} (set {VERBOSE_ENV}=1 for the traceback)"
    return f"{type(exc).__name__}: {text} (set {VERBOSE_ENV}=1 or --verbose for the traceback)"
