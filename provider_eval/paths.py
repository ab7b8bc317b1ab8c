"""Where the project's own files live, and the defaults a user can override."""
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[1]
DATA_DIR = PROJECT_ROOT / "data"
REFERENCE_DIR = DATA_DIR / "reference"
SQL_DIR = PROJECT_ROOT / "sql"
DEFAULT_SOURCES = DATA_DIR / "sources.yaml"
DEFAULT_WORKLOADS = DATA_DIR / "workloads.yaml"
DEFAULT_WAREHOUSE = PROJECT_ROOT / "warehouse" / "provider_eval.duckdb"
