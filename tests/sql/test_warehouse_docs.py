"""Every column of every public table is described in the marts' schema.yml, and docs/warehouse.md is generated from it."""
import re

import pytest

from flows.refresh import PUBLIC_TABLES
from provider_eval import warehouse_docs
from provider_eval.paths import PROJECT_ROOT, SQL_DIR
from tests.conftest import query


def test_every_public_column_is_described(sample_warehouse):
    marts = warehouse_docs.load_marts()
    built = {r[0] for r in query(sample_warehouse, "select table_name from information_schema.tables "
                                                   "where table_schema = 'marts'")}
    assert set(PUBLIC_TABLES) <= built
    for table in sorted(built):
        columns = [r[0] for r in query(sample_warehouse, f'describe marts."{table}"')]
        assert table in marts, f"sql/models/marts/schema.yml has no entry for the mart {table}"
        described = marts[table]["columns"]
        assert set(columns) - set(described) == set(), f"{table}: columns without a description in schema.yml"
        # A described column the mart no longer has would be documented forever.
        assert set(described) - set(columns) == set(), f"{table}: schema.yml describes columns the mart lacks"
        assert all(described.values()), f"{table}: empty column descriptions"
        assert marts[table]["description"], f"{table}: no table description"


def test_every_mart_model_is_in_schema_yml():
    """A new mart file gets an entry (and so a section in docs/warehouse.md) before it is merged."""
    models = {p.stem for p in (SQL_DIR / "models" / "marts").glob("*.sql")}
    assert models == set(warehouse_docs.load_marts())


def test_warehouse_md_is_generated_from_schema_yml():
    expected = warehouse_docs.render(warehouse_docs.TEMPLATE.read_text(encoding="utf-8"), warehouse_docs.load_marts())
    assert warehouse_docs.OUTPUT.read_text(encoding="utf-8") == expected, (
        "docs/warehouse.md is stale: run `python -m provider_eval.warehouse_docs`")
    assert warehouse_docs.main(["--check"]) == 0


def test_paths_the_docs_name_exist():
    """SQL files named in the descriptions or the prose still exist (models get split and renamed)."""
    text = warehouse_docs.MARTS_SCHEMA.read_text(encoding="utf-8") + warehouse_docs.TEMPLATE.read_text(encoding="utf-8")
    named = set(re.findall(r"\bsql/[\w/]+\.sql\b", text))
    assert named and {p for p in named if not (PROJECT_ROOT / p).is_file()} == set()


def test_section_groups_columns_and_escapes_cells():
    mart = {"description": "One row per thing.",
            "columns": {"a": "the same", "b": "the same", "c": "x | y", "d": "the same"}}
    assert warehouse_docs.section("things", mart).splitlines() == [
        "### things", "One row per thing.", "", "| column | meaning |", "|---|---|",
        "| `a`, `b` | the same |", "| `c` | x \\| y |", "| `d` | the same |"]


def test_render_refuses_a_mart_without_a_place():
    marts = {"offers": {"description": "d", "columns": {"x": "y"}}, "new_mart": {"description": "d", "columns": {}}}
    with pytest.raises(ValueError, match=r"not placed .*\['new_mart'\]"):
        warehouse_docs.render("<!-- mart: offers -->\n", marts)
    with pytest.raises(ValueError, match=r"not in schema.yml: \['gone'\]"):
        warehouse_docs.render("<!-- mart: offers -->\n<!-- mart: new_mart -->\n<!-- mart: gone -->\n", marts)
