"""Where the project's own files live, and the defaults a user can override."""
import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[1]
DATA_DIR = PROJECT_ROOT / "data"
REFERENCE_DIR = DATA_DIR / "reference"
SQL_DIR = PROJECT_ROOT / "sql"
DEFAULT_SOURCES = DATA_DIR / "sources.yaml"
DEFAULT_WORKLOADS = DATA_DIR / "workloads.yaml"
# PROVIDER_EVAL_WAREHOUSE moves the default warehouse (a scheduled deployment's worker, a test);
# an explicit --warehouse / warehouse_path still wins. Always absolute: a scheduled run's working
# directory is the worker's, and the quality gate's Data Docs need an absolute folder.
DEFAULT_WAREHOUSE = Path(os.environ.get("PROVIDER_EVAL_WAREHOUSE")
                         or PROJECT_ROOT / "warehouse" / "provider_eval.duckdb").expanduser().absolute()
