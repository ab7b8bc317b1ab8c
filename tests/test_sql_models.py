"""SQL model discovery and ordering: every model is built after what it reads."""
from pathlib import Path

import duckdb
import pytest

from provider_eval import sql_models
from provider_eval.errors import SqlModelError
from provider_eval.paths import SQL_DIR


def _model(name, sql):
    return sql_models.SqlModel(name, "marts", Path(f"{name}.sql"), sql)


def test_models_come_after_their_dependencies():
    order = [m.name for m in sql_models.build_order(sql_models.discover(SQL_DIR))]
    for before, after in [("stg_quote_observations", "offers"), ("offers", "workload_costs"),
                          ("int_workload_throughput", "workload_costs"), ("workload_costs", "rankings")]:
        assert order.index(before) < order.index(after)


def test_comments_do_not_create_dependencies():
    a = _model("a", "-- mentions b in a comment\nselect 1 as x")
    b = _model("b", "select * from a")
    assert [m.name for m in sql_models.build_order([b, a])] == ["a", "b"]


def test_a_cycle_is_an_error():
    with pytest.raises(SqlModelError, match="cycle"):
        sql_models.build_order([_model("a", "select * from b"), _model("b", "select * from a")])


def test_checks_report_offending_rows(tmp_path):
    (tmp_path / "checks").mkdir()
    (tmp_path / "checks" / "assert_positive.sql").write_text("select x from t where x <= 0")
    (tmp_path / "checks" / "assert_small.sql").write_text("select x from t where x > 100")
    con = duckdb.connect()
    con.execute("create table t as select * from (values (1), (-2), (-3)) v(x)")
    [failure] = sql_models.run_checks(con, tmp_path)
    assert (failure.name, failure.rows) == ("assert_positive", 2)
