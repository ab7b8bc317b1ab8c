"""Every dbt unit test of sql/models (given input rows → expected rows, in the _unit_tests.yml files
beside the models) passes, run by dbt itself against the session's empty warehouse (unit tests need
the upstream relations for their column types); a failure names the unit test with dbt's diff."""
import re
import shutil

import pytest
import yaml

from provider_eval import sql_layer
from provider_eval.paths import SQL_DIR
from tests.sql_chain import empty_warehouse

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def declared_unit_tests() -> dict[str, str]:
    """Every unit test named in the project's YAML files, with the model it tests."""
    found = {}
    for path in sorted((SQL_DIR / "models").rglob("*.yml")):
        for test in (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("unit_tests") or []:
            found[test["name"]] = test["model"]
    return found


@pytest.fixture(scope="module")
def unit_results(tmp_path_factory) -> dict[str, tuple[str, str]]:
    """Run `dbt test --select test_type:unit` once: unit test name → (status, dbt's message)."""
    work = tmp_path_factory.mktemp("dbt-unit-tests")
    database = work / "warehouse.duckdb"
    shutil.copy(empty_warehouse(), database)  # dbt opens it for writing: a copy, the session's stays shared
    sql_layer.write_profile(work, database, "1GB", None)
    result = sql_layer.invoke("test", SQL_DIR, work, ["--select", "test_type:unit"],
                              manifest=sql_layer.parsed(SQL_DIR, work, database))
    return {r.node.name: (str(getattr(r.status, "value", r.status)), ANSI.sub("", r.message or ""))
            for r in result.result.results if r.node.resource_type == "unit_test"}


def test_dbt_ran_every_declared_unit_test(unit_results):
    declared = declared_unit_tests()
    assert len(declared) >= 10
    assert sorted(unit_results) == sorted(declared)


@pytest.mark.parametrize("name", sorted(declared_unit_tests()))
def test_unit_test(unit_results, name):
    status, message = unit_results.get(name, ("not run", "dbt did not run it"))
    assert status == "pass", f"dbt unit test {name} (model {declared_unit_tests()[name]}) {status}: {message}"


def test_the_refresh_build_runs_no_unit_test(tmp_path):
    """sql_layer.build (the refresh's) builds models and data tests only: a unit test never blocks publishing."""
    database = tmp_path / "warehouse.duckdb"
    shutil.copy(empty_warehouse(), database)
    built = sql_layer.build(database, SQL_DIR, tmp_path / "dbt", "1GB")
    assert built.problem is None, built.problem
    kinds = {n.resource_type for n in built.nodes}
    assert "model" in kinds and "test" in kinds and "unit_test" not in kinds
