"""Errors that speak the user's vocabulary: file, line or row, field, reason."""


class ProviderEvalError(Exception):
    """Base class for errors shown to the user as one readable message (no traceback)."""


class ConfigError(ProviderEvalError):
    """A declarative input (sources.yaml, workloads.yaml) is malformed; names file and line."""


class RefreshFailed(ProviderEvalError):
    """The refresh could not publish; the previously published warehouse is left in place."""


class WarehouseMissing(ProviderEvalError):
    """No published warehouse exists yet at the given path."""


class SqlModelError(ProviderEvalError):
    """A SQL model failed to build; names its file."""
