"""The import-linter layers contract (pyproject [tool.importlinter]) holds, covers every module and can fail."""
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

from provider_eval.paths import PROJECT_ROOT

LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def lint_imports(root: Path) -> subprocess.CompletedProcess:
    """`lint-imports` on the tree at root, with root on PYTHONPATH (import-linter reads the code, never runs it)."""
    return subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=root, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(root)})


def layers() -> list[str]:
    contracts = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    return next(c for c in contracts if c["type"] == "layers")["layers"]


def test_the_layers_contract_is_kept():
    done = lint_imports(PROJECT_ROOT)
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_module_has_a_layer():
    # A module in no layer is unchecked: a new one must be placed (in pyproject) before it is imported.
    placed = {name.strip() for layer in layers() for name in layer.replace(":", "|").split("|")}
    modules = {f"{package}.{p.stem}" for package in ("provider_eval", "flows")
               for p in (PROJECT_ROOT / package).iterdir()
               if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").exists()}
    assert modules - placed == set(), "modules in no layer of [tool.importlinter]"
    assert placed - modules - {"models"} == set(), "layers naming no module"


def test_a_library_module_importing_the_face_breaks_the_contract(tmp_path):
    # The check is real: a copy of the tree where the library imports the CLI fails, naming the import.
    for name in ("provider_eval", "flows", "models"):
        shutil.copytree(PROJECT_ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(PROJECT_ROOT / "pyproject.toml", tmp_path)
    warehouse = tmp_path / "provider_eval" / "warehouse.py"
    warehouse.write_text(warehouse.read_text() + "\nfrom provider_eval.cli import shared  # noqa: E402,F401\n")
    done = lint_imports(tmp_path)
    assert done.returncode != 0, done.stdout
    assert "BROKEN" in done.stdout and "provider_eval.warehouse -> provider_eval.cli.shared" in done.stdout, done.stdout
