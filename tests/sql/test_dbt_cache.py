"""A build reuses dbt's parsed project only while it is the same project: a changed model, a changed
environment variable it reads or a damaged cache file make dbt parse again, and the tables come out
the same either way."""
import shutil

import pytest

from provider_eval import dbt_cache, sql_layer
from provider_eval.paths import SQL_DIR
from tests.conftest import query
from tests.sql_chain import empty_warehouse

TINY_PROJECT = """name: provider_eval
version: "1.0.0"
config-version: 2
profile: provider_eval
model-paths: ["models"]
models:
  provider_eval:
    +materialized: table
"""


@pytest.fixture
def parses(monkeypatch, tmp_path) -> list[str]:
    """A private cache (memory and folder) and the list of sql/ folders dbt parsed in this test."""
    monkeypatch.setenv("PROVIDER_EVAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(dbt_cache, "_IN_MEMORY", {})
    seen, invoke = [], sql_layer.invoke

    def spy(command, sql_dir, *args, **kwargs):
        if command == "parse":
            seen.append(str(sql_dir))
        return invoke(command, sql_dir, *args, **kwargs)

    monkeypatch.setattr(sql_layer, "invoke", spy)
    return seen


def tiny_project(root, model_sql: str):
    """A one-model dbt project (model `answer`) in root/sql."""
    (root / "sql" / "models").mkdir(parents=True)
    (root / "sql" / "dbt_project.yml").write_text(TINY_PROJECT, encoding="utf-8")
    (root / "sql" / "models" / "answer.sql").write_text(model_sql, encoding="utf-8")
    return root / "sql"


def build_answer(sql_dir, folder):
    """Build the tiny project into folder/warehouse.duckdb; its one row."""
    built = sql_layer.build(folder / "warehouse.duckdb", sql_dir, folder / "dbt", "1GB")
    assert built.problem is None, built.problem
    return query(folder / "warehouse.duckdb", "select * from main.answer")


def test_a_changed_model_is_parsed_again(parses, tmp_path):
    sql_dir = tiny_project(tmp_path, "select 1 as a\n")
    assert build_answer(sql_dir, tmp_path / "b1") == [(1,)]
    assert build_answer(sql_dir, tmp_path / "b2") == [(1,)]
    assert parses == [str(sql_dir)]  # the second build, into another folder, reused the first parse
    (sql_dir / "models" / "answer.sql").write_text("select 2 as a\n", encoding="utf-8")
    assert build_answer(sql_dir, tmp_path / "b3") == [(2,)]
    assert len(parses) == 2


def test_a_changed_environment_variable_the_project_reads_is_parsed_again(parses, tmp_path, monkeypatch):
    sql_dir = tiny_project(tmp_path, "select '{{ env_var('PROVIDER_EVAL_TEST_ANSWER') }}' as a\n")
    monkeypatch.setenv("PROVIDER_EVAL_TEST_ANSWER", "one")
    assert build_answer(sql_dir, tmp_path / "b1") == [("one",)]
    monkeypatch.setenv("PROVIDER_EVAL_TEST_ANSWER", "two")
    assert build_answer(sql_dir, tmp_path / "b2") == [("two",)]
    assert len(parses) == 2


def test_a_damaged_cache_file_is_parsed_again_in_the_next_process(parses, tmp_path, monkeypatch):
    sql_dir = tiny_project(tmp_path, "select 1 as a\n")
    assert build_answer(sql_dir, tmp_path / "b1") == [(1,)]
    (kept,) = (tmp_path / "cache" / "dbt-manifests" / "parsed").glob("*.pickle")
    kept.write_bytes(kept.read_bytes()[:100])
    monkeypatch.setattr(dbt_cache, "_IN_MEMORY", {})  # a new process: only the damaged file is left
    assert build_answer(sql_dir, tmp_path / "b2") == [(1,)]
    assert len(parses) == 2
    assert len(kept.read_bytes()) > 100  # replaced by the new parse


def test_another_catalog_name_gets_its_own_parse(parses, tmp_path):
    """Every node carries the catalog (the file's name): a manifest parsed for one never builds another."""
    sql_dir = tiny_project(tmp_path, "select 1 as a\n")
    (tmp_path / "p").mkdir()
    sql_layer.write_profile(tmp_path / "p", tmp_path / "p" / "one.duckdb", "1GB", None)
    one = sql_layer.parsed(sql_dir, tmp_path / "p", tmp_path / "p" / "one.duckdb")
    sql_layer.write_profile(tmp_path / "p", tmp_path / "p" / "two.duckdb", "1GB", None)
    two = sql_layer.parsed(sql_dir, tmp_path / "p", tmp_path / "p" / "two.duckdb")
    assert {n.database for n in one.nodes.values()} == {"one"}
    assert {n.database for n in two.nodes.values()} == {"two"}
    assert len(parses) == 2


def test_the_project_built_from_a_kept_parse_equals_one_built_from_a_fresh_parse(parses, tmp_path):
    """Every table of the real project, on the session's empty warehouse: a fresh parse, then the kept one."""
    empty, tables = empty_warehouse(), {}
    parses.clear()  # the empty warehouse's own (compiled SQL on an in-memory database, when built now)
    for run in ("fresh", "kept"):
        (tmp_path / run).mkdir()
        shutil.copy(empty, tmp_path / run / "warehouse.duckdb")
        built = sql_layer.build(tmp_path / run / "warehouse.duckdb", SQL_DIR, tmp_path / run / "dbt", "1GB")
        assert built.problem is None, built.problem
        tables[run] = query(tmp_path / run / "warehouse.duckdb",
                            "select table_schema, table_name, table_type, column_name, data_type "
                            "from information_schema.columns join information_schema.tables "
                            "using (table_catalog, table_schema, table_name) order by all")
    assert parses == [str(SQL_DIR)]
    assert tables["fresh"] == tables["kept"] and len(tables["kept"]) > 500
