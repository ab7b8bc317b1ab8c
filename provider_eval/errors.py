"""Errors that speak the user's vocabulary: file, line or row, field, reason."""
from provider_eval.exit_codes import ExitCode


class ProviderEvalError(Exception):
    """Base class for errors shown to the user as one readable message (no traceback)."""

    exit_code = ExitCode.FAILED


class ConfigError(ProviderEvalError):
    """A declarative input (sources.yaml, workloads.yaml) is malformed; names file and line."""

    exit_code = ExitCode.USAGE


class RefreshFailed(ProviderEvalError):
    """The refresh could not publish; the previously published warehouse is left in place."""


class WarehouseMissing(ProviderEvalError):
    """No published warehouse exists yet at the given path."""


class SqlModelError(ProviderEvalError):
    """A SQL model failed to build; names its file."""


class UnsafePath(ProviderEvalError):
    """A path built from input (a source name, a record id) would leave the folder it belongs in."""

    exit_code = ExitCode.USAGE
