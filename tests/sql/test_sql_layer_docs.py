"""docs/sql-layer.md's promises: an offline dbt docs site, and an analyst's own mart answering after a refresh."""
import re
import shutil

import duckdb
import pytest

from provider_eval import dbt_docs_site, report, warehouse_docs
from provider_eval.paths import SQL_DIR
from tests.conftest import query, run_refresh
from tests.cli.test_report import _chromium


@pytest.fixture(scope="module")
def site(sample_warehouse):
    return dbt_docs_site.generate(sample_warehouse)


def test_docs_site_loads_nothing_from_anywhere(site, sample_warehouse):
    assert site == sample_warehouse.parent / "dbt_docs" / "index.html"
    page = site.read_text(encoding="utf-8")
    assert dbt_docs_site.external_loads(page) == []
    assert dbt_docs_site.CSP in page[:2000]
    assert '"send_anonymous_usage_stats": false' in page  # dbt's page turns tracking on otherwise
    # The site documents the marts with schema.yml's words and the warehouse's own column types.
    assert "cheapest per completed unit" in page and "model.provider_eval.int_quote_latest" in page


def test_docs_site_renders_offline_in_headless_chromium(site, tmp_path):
    description = warehouse_docs.load_marts()["rankings"]["columns"]["rank"]
    dom = _chromium(tmp_path, "--virtual-time-budget=5000", "--dump-dom",
                    site.as_uri() + "#!/model/model.provider_eval.rankings")
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert description in dom.stdout  # the page drew the model's columns, from the inlined manifest
    # What the page tried to fetch from a host (refused by its policy) or failed to load.
    refused = re.findall(r"'((?:https?:)?//[^']*)' violates the following Content Security Policy", dom.stderr)
    assert refused == [] and "net::ERR_" not in dom.stderr, dom.stderr[-2000:]


def test_docs_site_is_kept_until_a_table_or_column_changes(site, sample_warehouse, tmp_path):
    written = site.stat().st_mtime_ns
    assert dbt_docs_site.generate(sample_warehouse) == site and site.stat().st_mtime_ns == written
    # A refresh publishes a new file under the same name: with the same tables and columns (rows
    # aside) the site is kept; a changed column or comment regenerates it.
    copy = tmp_path / "w.duckdb"
    shutil.copy(sample_warehouse, copy)
    before = dbt_docs_site._stamp(copy, SQL_DIR)
    shutil.copy(sample_warehouse, tmp_path / "next.duckdb")
    with duckdb.connect(str(tmp_path / "next.duckdb")) as con:
        con.execute("delete from marts.offers")  # other rows, same catalog
    (tmp_path / "next.duckdb").replace(copy)
    assert dbt_docs_site._stamp(copy, SQL_DIR) == before
    for change in ("comment on column marts.offers.offer_id is 'another description'",
                   "alter table marts.offers add column extra_usd decimal(18, 6)",
                   "create view main.my_view as select 1 as x"):
        changed = tmp_path / "changed.duckdb"
        shutil.copy(sample_warehouse, changed)
        with duckdb.connect(str(changed)) as con:
            con.execute(change)
        changed.replace(copy)
        assert dbt_docs_site._stamp(copy, SQL_DIR) != before, change
    # The same catalog under another path is another site (its profile names the file).
    assert dbt_docs_site._stamp(sample_warehouse, SQL_DIR) != before


def test_report_without_a_writable_docs_folder_says_why(sample_warehouse, tmp_path):
    """The report is still written when the site cannot be (here dbt_docs is a file, not a folder)."""
    copy = tmp_path / "w.duckdb"
    shutil.copy(sample_warehouse, copy)
    (tmp_path / "dbt_docs").write_text("not a folder", encoding="utf-8")
    page = report.write_report(copy, tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert 'id="sql-docs"' not in page
    assert "The dbt docs site could not be written beside the warehouse" in page and "dbt_docs" in page


def test_offline_points_every_external_load_at_nothing():
    page = """<html><head><link rel="stylesheet" href="https://fonts.example/css"></head><body>
<script src="//cdn.example/lib.js"></script><script>i.src="//d1.cloudfront.example/sp.js";</script>
<style>@import "https://css.example/a.css"; .x { background: url(https://img.example/b.png) }</style>
<a href="https://docs.getdbt.com/docs/introduction">a link is not a load</a></body></html>"""
    assert dbt_docs_site.external_loads(page) == sorted([
        "https://fonts.example/css", "//cdn.example/lib.js", "//d1.cloudfront.example/sp.js",
        "https://css.example/a.css", "https://img.example/b.png"])
    safe = dbt_docs_site.offline(page)
    assert dbt_docs_site.external_loads(safe) == []
    assert safe.startswith("<html><head>" + dbt_docs_site.CSP)
    assert "https://docs.getdbt.com/docs/introduction" in safe


def test_an_analysts_own_mart_answers_after_a_refresh(tmp_path):
    """docs/sql-layer.md: a file in sql/models/marts/ is a public view after the next refresh."""
    sql_dir = tmp_path / "sql"
    shutil.copytree(SQL_DIR, sql_dir)
    (sql_dir / "models" / "marts" / "my_view.sql").write_text(
        "-- The cheapest configuration per workload.\n"
        "select workload_id, gpu_model, cost_per_unit_usd from {{ ref('rankings') }} where rank = 1\n",
        encoding="utf-8")
    warehouse = tmp_path / "w.duckdb"
    state = run_refresh(warehouse, sql_dir=sql_dir)
    assert state.is_completed(), state.message
    mine = query(warehouse, "select * from my_view order by workload_id")
    assert mine and mine == query(warehouse, "select workload_id, gpu_model, cost_per_unit_usd from rankings "
                                             "where rank = 1 order by workload_id")
    assert query(warehouse, "select count(*) from marts.my_view") == [(len(mine),)]
