"""A SQL build whose models ran out of memory side by side runs them again one at a time; any other
failure stands as it is (provider_eval/sql_layer.py, build)."""
from pathlib import Path

import duckdb

from provider_eval import sql_layer
from provider_eval.sql_layer import NodeResult, merge_rerun, out_of_memory_rerun

OOM = "Out of Memory Error: failed to pin block of size 256.0 KiB (953.6 MiB/953.6 MiB used)"


def _node(name: str, status: str, message: str | None = None, kind: str = "model") -> NodeResult:
    return NodeResult(name, kind, status, 1.0, message)


def test_only_a_build_that_failed_for_memory_alone_runs_again():
    nodes = [_node("a", "success"), _node("big", "error", OOM), _node("after_big", "skipped"),
             _node("not_null_after_big_x", "skipped", kind="test")]
    assert out_of_memory_rerun(nodes) == ["big", "after_big", "not_null_after_big_x"]
    # Another failure beside it is the user's to see, not to be run again.
    assert out_of_memory_rerun([*nodes, _node("broken", "error", "Binder Error: column x not found")]) == []
    assert out_of_memory_rerun([_node("t", "fail", kind="test")]) == []
    assert out_of_memory_rerun([_node("a", "success")]) == []


def test_the_rerun_replaces_what_it_ran_again():
    first = [_node("a", "success"), _node("big", "error", OOM), _node("after_big", "skipped")]
    again = [_node("big", "success"), _node("after_big", "success")]
    assert [(n.name, n.status) for n in merge_rerun(first, again)] == [
        ("a", "success"), ("big", "success"), ("after_big", "success")]


def _project(root: Path, model_sql: str) -> Path:
    """A dbt project with `flaky` (model_sql), `after_flaky` reading it, a test on it, and `steady`."""
    sql_dir = root / "sql"
    (sql_dir / "models").mkdir(parents=True)
    (sql_dir / "dbt_project.yml").write_text(
        "name: retry_probe\nversion: '1.0.0'\nconfig-version: 2\nprofile: provider_eval\n"
        "models:\n  retry_probe:\n    +materialized: table\n")
    (sql_dir / "models" / "flaky.sql").write_text(model_sql)
    (sql_dir / "models" / "after_flaky.sql").write_text("select x + 1 as y from {{ ref('flaky') }}\n")
    (sql_dir / "models" / "steady.sql").write_text("select 1 as z\n")
    (sql_dir / "models" / "schema.yml").write_text(
        "version: 2\nmodels:\n  - name: after_flaky\n    columns:\n      - name: y\n        data_tests: [not_null]\n")
    return sql_dir


# A model that fails as DuckDB does when memory runs out in the first dbt invocation that builds it
# and succeeds in the next: each attempt first writes one marker file (a fresh name each time).
FLAKY_SQL = """{{ config(pre_hook="copy (select 1 as m, 1 as n) to 'MARKERS' (format csv, partition_by (m), filename_pattern 'try_{uuid}', overwrite_or_ignore true)") }}
select case when (select count(*) from glob('MARKERS/*/*.csv')) < 2
    then error('Out of Memory Error: failed to pin block (the test model, first attempt)') else 1 end as x
"""


def _build(tmp_path: Path, model_sql: str) -> tuple[sql_layer.BuildResult, list[str]]:
    markers = tmp_path / "markers"
    markers.mkdir()
    sql_dir = _project(tmp_path, model_sql.replace("MARKERS", str(markers)))
    database = tmp_path / "w.duckdb"
    duckdb.connect(str(database)).close()
    seen: list[str] = []
    result = sql_layer.build(database, sql_dir, tmp_path / "dbt", "1GB", on_node=lambda n: seen.append(f"{n.name}:{n.status}"),
                             target_dir=tmp_path / "target", full_refresh=True)
    return result, seen


def test_models_that_ran_out_of_memory_are_built_again_one_at_a_time(tmp_path):
    result, seen = _build(tmp_path, FLAKY_SQL)
    assert result.problem is None
    assert {n.name: n.status for n in result.nodes} == {
        "flaky": "success", "after_flaky": "success", "steady": "success", "not_null_after_flaky_y": "pass"}
    # The first invocation: flaky failed, what reads it was skipped; the second built only those.
    assert seen.count("flaky:error") == 1 and seen.count("flaky:success") == 1
    assert seen.count("steady:success") == 1 and seen.count("after_flaky:success") == 1
    # The failed first attempt is kept apart (its seconds are time the build lost), not among the nodes.
    assert [(n.name, n.status) for n in result.memory_reruns] == [("flaky", "error")]
    with duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True) as con:
        assert con.execute("select y from main.after_flaky").fetchall() == [(2,)]


def test_another_failure_is_not_run_again(tmp_path):
    broken = FLAKY_SQL.replace("Out of Memory Error", "Invalid Input Error")
    result, seen = _build(tmp_path, broken)
    assert result.problem is not None and "flaky" in result.problem and "Invalid Input Error" in result.problem
    assert seen.count("flaky:error") == 1 and not any(s.startswith("flaky:success") for s in seen)
    assert len(list((tmp_path / "markers").glob("*/*.csv"))) == 1  # one attempt only
    assert result.memory_reruns == []
