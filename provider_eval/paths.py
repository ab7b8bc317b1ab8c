"""Where the project's own files live, and the defaults a user can override.

An installed package carries data/ and sql/ inside provider_eval/ (setup.py copies them into the
wheel); a source checkout (or an editable install) reads them at the checkout's root.
"""
import os
from pathlib import Path

from provider_eval.settings import get_settings

PACKAGE_DIR = Path(__file__).resolve().parent
# The folder holding the packages (provider_eval, flows, models): a checkout's root, or site-packages.
PROJECT_ROOT = PACKAGE_DIR.parent
INSTALLED = (PACKAGE_DIR / "data").is_dir()
_HOME = PACKAGE_DIR if INSTALLED else PROJECT_ROOT
DATA_DIR = _HOME / "data"
REFERENCE_DIR = DATA_DIR / "reference"
SQL_DIR = _HOME / "sql"
DEFAULT_SOURCES = DATA_DIR / "sources.yaml"
DEFAULT_WORKLOADS = DATA_DIR / "workloads.yaml"


def default_warehouse() -> Path:
    """The warehouse used when no --warehouse is given: PROVIDER_EVAL_WAREHOUSE, else a default.

    The default is the checkout's warehouse/ folder, or for an installed package the user's data
    folder ($XDG_DATA_HOME or ~/.local/share, then provider-eval/), never site-packages. Always
    absolute: a scheduled run's working directory is the worker's, and the quality gate's Data
    Docs need an absolute folder.
    """
    chosen = get_settings("warehouse").warehouse
    if chosen is None:
        root = (Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "provider-eval"
                if INSTALLED else PROJECT_ROOT)
        chosen = root / "warehouse" / "provider_eval.duckdb"
    return chosen.expanduser().absolute()


def warehouse_or_default(path: Path | None) -> Path:
    """A --warehouse option's value, or the default warehouse as the environment says when the command runs."""
    return default_warehouse() if path is None else path


def __getattr__(name: str):
    # DEFAULT_WAREHOUSE is computed when read, so a change of PROVIDER_EVAL_WAREHOUSE after import counts.
    if name == "DEFAULT_WAREHOUSE":
        return default_warehouse()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
