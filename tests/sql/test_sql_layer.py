"""The layers of the dbt project, from dbt's manifest: models read each other only through ref() and
source(), staging reads only sources, intermediate never reads marts, and the sources declared in
sql/models/sources.yml are exactly the tables the Python loaders write."""
import re

import duckdb
import pytest

from provider_eval import sql_compiled
from provider_eval.paths import SQL_DIR
from tests.sql_chain import SOURCE_SCHEMAS, empty_warehouse

LAYERS = ("staging", "intermediate", "marts")
# schema.table as SQL names it (each part quoted or not), for a schema the warehouse has.
RELATION = re.compile(r'(?<![\w."/])"?(' + "|".join(sql_compiled.SCHEMAS + ("main",)) + r')"?\s*\.\s*"?(\w+)"?', re.I)
# What is not model SQL for this purpose: Jinja blocks (ref() and source() among them), comments, string literals.
NOT_SQL = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}|--[^\n]*|/\*.*?\*/|'(?:[^']|'')*'", re.S)


@pytest.fixture(scope="module")
def manifest() -> dict:
    return sql_compiled.compile_manifest(SQL_DIR)


def _models(manifest: dict) -> dict[str, dict]:
    return {uid: n for uid, n in manifest["nodes"].items() if n["resource_type"] == "model"}


def _relation(manifest: dict, uid: str) -> tuple[str, str]:
    """(schema, table) of a model or source by its unique id."""
    node = manifest["nodes"].get(uid) or manifest["sources"][uid]
    return node["schema"].lower(), (node.get("identifier") or node.get("alias") or node["name"]).lower()


def _layer(manifest: dict, uid: str) -> str:
    """A node's layer: its folder under models/ (staging, intermediate, marts), or 'source'."""
    return "source" if uid.startswith("source.") else manifest["nodes"][uid]["fqn"][1]


def hand_written_relations(manifest: dict) -> list[str]:
    """Every relation a model names in its own SQL text instead of through ref() or source()."""
    problems = []
    for node in _models(manifest).values():
        for schema, name in RELATION.findall(NOT_SQL.sub(" ", node["raw_code"])):
            problems.append(f"{node['original_file_path']}: reads {schema}.{name} without ref() or source()")
    return problems


def _reads(manifest: dict, uid: str) -> set[str]:
    """What a model's compiled SQL may read: its dependencies, and through an ephemeral one (inlined
    as a CTE) that one's dependencies."""
    out = set()
    for dep in manifest["nodes"][uid]["depends_on"]["nodes"]:
        node = manifest["nodes"].get(dep)
        if node is not None and node.get("config", {}).get("materialized") == "ephemeral":
            out |= _reads(manifest, dep)
        else:
            out.add(dep)
    return out


def undeclared_reads(manifest: dict) -> list[str]:
    """Every relation a model's compiled SQL reads that is not among the nodes dbt says it depends on."""
    problems = []
    for uid, node in _models(manifest).items():
        declared = {_relation(manifest, d) for d in _reads(manifest, uid)}
        read = {(s.lower(), t.lower()) for s, t in RELATION.findall(NOT_SQL.sub(" ", node["compiled_code"]))}
        problems += [f"{node['name']}: reads {s}.{t}, not in its depends_on" for s, t in sorted(read - declared)]
    return problems


def layer_violations(manifest: dict, layer: str) -> list[str]:
    """Every read of a layer's models outside what the layer may read (staging: sources only;
    intermediate: sources, staging, intermediate — never marts)."""
    allowed = {"staging": {"source"}, "intermediate": {"source", "staging", "intermediate"}}[layer]
    problems = []
    for uid, node in sorted(_models(manifest).items()):
        if _layer(manifest, uid) == layer:
            problems += [f"{layer} model {node['name']} reads {_layer(manifest, dep)} model {dep.split('.')[-1]}"
                         for dep in node["depends_on"]["nodes"] if _layer(manifest, dep) not in allowed]
    return problems


def misplaced_models(manifest: dict) -> list[str]:
    """Every model outside the three layer folders, or in a schema other than its folder's."""
    return [f"{n['original_file_path']}: folder {_layer(manifest, uid)}, schema {n['schema']} (one schema per layer)"
            for uid, n in sorted(_models(manifest).items())
            if _layer(manifest, uid) not in LAYERS or n["schema"] != _layer(manifest, uid)]


def test_models_read_each_other_only_through_ref_and_source(manifest):
    problems = hand_written_relations(manifest) + undeclared_reads(manifest)
    assert not problems, "\n".join(problems)


def test_each_model_sits_in_its_layers_schema(manifest):
    problems = misplaced_models(manifest)
    assert not problems, "\n".join(problems)


def test_staging_reads_only_sources(manifest):
    problems = layer_violations(manifest, "staging")
    assert not problems, "\n".join(problems)


def test_intermediate_never_reads_marts(manifest):
    problems = layer_violations(manifest, "intermediate")
    assert not problems, "\n".join(problems)


def test_declared_sources_are_exactly_what_the_loaders_write(manifest):
    declared = {(s["schema"], s["identifier"]) for s in manifest["sources"].values()}
    with duckdb.connect(str(empty_warehouse()), read_only=True) as con:
        written = set(con.execute("select schema_name, table_name from duckdb_tables() where schema_name in ?",
                                  [list(SOURCE_SCHEMAS)]).fetchall())
    assert sorted(written - declared) == [], "tables the loaders write that sql/models/sources.yml does not declare"
    assert sorted(declared - written) == [], "sources declared in sql/models/sources.yml that no loader writes"


def _node(name: str, layer: str, raw: str, compiled: str, depends_on: list[str]) -> dict:
    return {"resource_type": "model", "name": name, "schema": layer, "fqn": ["provider_eval", layer, name],
            "original_file_path": f"models/{layer}/{name}.sql", "raw_code": raw, "compiled_code": compiled,
            "depends_on": {"nodes": depends_on}}


def test_the_rules_catch_a_hand_written_read_and_a_layer_read_upwards():
    """The checks above can fail: a model that names staging.x itself, a layer reading upwards, a model in another schema."""
    manifest = {"sources": {"source.p.raw.workloads": {"schema": "raw", "name": "workloads", "identifier": "workloads"}},
                "nodes": {
        "model.p.stg_x": _node("stg_x", "staging", "select * from {{ source('raw', 'workloads') }} -- staging.y",
                               'select * from "raw"."workloads"', ["source.p.raw.workloads"]),
        "model.p.mart_x": _node("mart_x", "marts", "select 'ref.gpus' as s from {{ ref('stg_x') }}",
                                'select \'ref.gpus\' as s from "staging"."stg_x"', ["model.p.stg_x"]),
        "model.p.int_x": _node("int_x", "intermediate",
                               "select * from staging.stg_x join {{ ref('mart_x') }} using (s)",
                               'select * from staging.stg_x join "marts"."mart_x" using (s)', ["model.p.mart_x"]),
    }}
    assert hand_written_relations(manifest) == ["models/intermediate/int_x.sql: reads staging.stg_x without ref() or source()"]
    assert undeclared_reads(manifest) == ["int_x: reads staging.stg_x, not in its depends_on"]
    assert layer_violations(manifest, "intermediate") == ["intermediate model int_x reads marts model mart_x"]
    assert layer_violations(manifest, "staging") == []
    manifest["nodes"]["model.p.stg_x"]["depends_on"]["nodes"].append("model.p.int_x")
    assert layer_violations(manifest, "staging") == ["staging model stg_x reads intermediate model int_x"]
    manifest["nodes"]["model.p.int_x"]["schema"] = "main"
    assert misplaced_models(manifest) == ["models/intermediate/int_x.sql: folder intermediate, schema main (one schema per layer)"]


def test_the_model_graph_in_the_docs_is_the_manifests():
    """docs/sql-layer.md lists every model and what it reads as dbt's manifest has them (regenerate:
    python -m provider_eval.model_graph_docs)."""
    from provider_eval import model_graph_docs

    text = model_graph_docs.DOC.read_text(encoding="utf-8")
    assert model_graph_docs.render(text, sql_compiled.compile_manifest(SQL_DIR)) == text, \
        "stale: run python -m provider_eval.model_graph_docs"
