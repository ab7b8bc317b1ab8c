"""The knobs read from the environment, in one place (docs/configuration.md); read when used, never at import."""
import re
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BeforeValidator, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from provider_eval.errors import ConfigError

PREFIX = "PROVIDER_EVAL_"
# DuckDB's memory_limit syntax: a number and a unit (KB, MiB, GB…) or a share of RAM ('80%').
MEMORY = re.compile(r"^\d+(?:\.\d+)?\s*(?:[kmgt]i?b?|b|bytes|%)$", re.IGNORECASE)
ON, OFF = {"1", "yes", "true", "on"}, {"0", "no", "false", "off"}


def _auto_or_bool(value):
    """`auto` (or empty), or a yes/no the way people write it."""
    text = str(value).strip().lower()
    if text in ("", "auto"):
        return "auto"
    if text in ON | OFF:
        return text in ON
    raise ValueError("must be auto, 1 (always) or 0 (never)")


def _yes_or_no(value):
    """A yes/no the way people write it (empty: the default, yes)."""
    text = str(value).strip().lower()
    if text == "":
        return True
    if text in ON | OFF:
        return text in ON
    raise ValueError("must be 1 (yes) or 0 (no)")


def _memory(value):
    text = str(value).strip()
    if not MEMORY.match(text):
        raise ValueError("must be a DuckDB memory limit such as 1GB, 512MiB or 50%")
    return text


class Settings(BaseSettings):
    """Each field is the environment variable PROVIDER_EVAL_<NAME>; an unset one has its default."""

    model_config = SettingsConfigDict(env_prefix=PREFIX, extra="ignore", frozen=True)

    # Where the warehouse is published when no --warehouse is given (a scheduled worker, a test);
    # unset: paths.default_warehouse() (the checkout's warehouse/, or the user's data folder).
    warehouse: Annotated[Path | None, BeforeValidator(lambda v: v or None)] = None
    # DuckDB's buffer memory while a refresh builds (DuckDB alone takes 80 % of RAM; the SQL models
    # over 10M observations reached 13 GiB, docs/benchmark.md); past it, operators spill to disk.
    build_memory_limit: Annotated[str, BeforeValidator(_memory)] = "1GB"
    # Staging in worker processes: auto (when there is a lot to stage), True always, False never.
    stage_processes: Annotated[Literal["auto"] | bool, BeforeValidator(_auto_or_bool)] = "auto"
    # Keep the replaced warehouse file (<warehouse dir>/.previous/) as the next refresh's start, so a
    # refresh with something new copies nothing (provider_eval/warehouse.py); off: one file at rest.
    keep_previous_warehouse: Annotated[bool, BeforeValidator(_yes_or_no)] = True
    # Where dbt's parsed and compiled project is kept between processes (provider_eval/dbt_cache.py);
    # unset: $XDG_CACHE_HOME/provider-eval (~/.cache/provider-eval). The tests set one per run.
    cache_dir: Annotated[Path | None, BeforeValidator(lambda v: v or None)] = None


def env_name(field: str) -> str:
    """The environment variable a Settings field is read from."""
    return PREFIX + field.upper()


def get_settings(*needed: str) -> Settings:
    """The settings as the environment says now; a bad value is a ConfigError naming the variable.

    With field names, only those must be valid (a bad build memory limit fails the refresh that
    builds, not `rank`); the others fall back to their defaults.
    """
    try:
        return Settings()
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
    bad = {str(e["loc"][0]) for e in errors}
    if needed and not bad & set(needed):
        return Settings(**{name: Settings.model_fields[name].default for name in bad})  # init values win over env
    problems = "; ".join(f"{env_name(str(e['loc'][0]))}={e['input']!r}: {e['msg'].removeprefix('Value error, ')}"
                         for e in errors if not needed or e["loc"][0] in needed)
    raise ConfigError(f"environment: {problems}")
