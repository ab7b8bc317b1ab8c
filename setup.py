"""Build hook only (everything else is in pyproject.toml): ship data/ and sql/ inside the provider_eval package.

An installed provider-eval finds its reference catalogs, bundled sources.yaml / workloads.yaml with
their samples, and SQL project as provider_eval/data and provider_eval/sql (provider_eval/paths.py).
They live at the repository root for people working in a checkout, which setuptools package data
cannot reach, so they are copied into the build here. An editable install reads them in place.
"""
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
SHIPPED = ("data", "sql")
# Never shipped: caches and what tools write into the SQL project when run (dbt's target/ and logs/).
LEFT_OUT = shutil.ignore_patterns("__pycache__", "*.pyc", ".*", "target", "logs", "dbt_packages", "*.duckdb*")


class BuildWithData(build_py):
    """build_py, then data/ and sql/ copied whole into the built provider_eval package."""

    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        for name in SHIPPED:
            shutil.copytree(ROOT / name, Path(self.build_lib) / "provider_eval" / name, ignore=LEFT_OUT,
                            dirs_exist_ok=True)


setup(cmdclass={"build_py": BuildWithData})
