"""An installed provider-eval (not a checkout, not editable) carries its data and SQL and finds them."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# What a build needs from the checkout; copied so the build writes nothing into the working tree.
BUILD_INPUTS = ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "provider_eval", "flows", "models", "data", "sql")

# Runs with only the installed copy importable (cwd is not the checkout): what paths resolves, and
# whether the bundled configuration loads from there.
PROBE = """
import json, sys
from provider_eval import paths
from flows.ingest.sources import load_sources
from flows.ingest.workloads import load_workloads
from flows.ingest import stage_cache
from provider_eval import reference
sources = load_sources(paths.DEFAULT_SOURCES)
print(json.dumps({
    "installed": paths.INSTALLED, "package": str(paths.PACKAGE_DIR), "data": str(paths.DATA_DIR),
    "reference": str(paths.REFERENCE_DIR), "sql": str(paths.SQL_DIR), "reader": str(reference.REFERENCE_DIR),
    "warehouse": str(paths.default_warehouse()),
    "sql_files": sorted(str(p.relative_to(paths.SQL_DIR)) for p in paths.SQL_DIR.rglob("*") if p.is_file()),
    "sources_without_files": [s.name for s in sources if s.url is None and not s.files()],
    "workloads": load_workloads(paths.DEFAULT_WORKLOADS).height,
    "fingerprint": len(stage_cache.code_fingerprint()),
}))
"""


def test_a_non_editable_install_finds_its_data_and_sql(tmp_path):
    src, site, home = tmp_path / "src", tmp_path / "site", tmp_path / "home"
    src.mkdir()
    for name in BUILD_INPUTS:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(ROOT / name, src / name)
    build = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site), str(src)],
                           capture_output=True, text=True, timeout=120)
    assert build.returncode == 0, build.stderr
    env = {**os.environ, "PYTHONPATH": str(site), "HOME": str(home), "XDG_DATA_HOME": ""}
    env.pop("PROVIDER_EVAL_WAREHOUSE", None)
    run = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout)
    package = site / "provider_eval"
    assert got["installed"] and got["package"] == str(package)
    assert (got["data"], got["sql"]) == (str(package / "data"), str(package / "sql"))
    assert got["reference"] == got["reader"] == str(package / "data" / "reference")
    for name in ("gpus.csv", "gpu_aliases.csv", "llm_models.csv", "precisions.csv", "plausibility_limits.csv"):
        assert (package / "data" / "reference" / name).is_file(), name
    # The whole SQL tree, whatever its layout (*.sql, *.yml, in any folder), and nothing else.
    shipped = sorted(str(p.relative_to(ROOT / "sql")) for p in (ROOT / "sql").rglob("*") if p.is_file()
                     and not (set(p.parts) & {"__pycache__", "target", "logs", "dbt_packages"})
                     and not p.name.startswith(".") and not p.name.endswith((".pyc", ".duckdb")))
    assert got["sql_files"] == shipped and any(name.endswith(".sql") for name in shipped)
    # The bundled sources.yaml finds its samples beside it, and the workloads load.
    assert got["sources_without_files"] == [] and got["workloads"] >= 1
    assert got["fingerprint"] == 64
    # Never inside site-packages: the user's data folder.
    assert got["warehouse"] == str(home / ".local" / "share" / "provider-eval" / "warehouse" / "provider_eval.duckdb")
