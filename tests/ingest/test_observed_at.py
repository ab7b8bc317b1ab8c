"""When a price was observed: its basis (row, source default, fetch, landing), and an undated price
never beating a dated one nor passing an age limit (issue 16, "Dates and scenarios")."""
import datetime as dt
from pathlib import Path

import polars as pl
import pytest

from flows.ingest.adapters import quote_csv
from provider_eval.paths import DATA_DIR
from tests.adapter_context import file_context
from tests.conftest import FIXTURES, query, run_refresh, write_sources

CASES = FIXTURES / "quotes" / "observed_at"
LANDED = "2026-11-30T08:00:00+00:00"


def _parse(path: Path, defaults: dict, original_path: str = "") -> pl.DataFrame:
    ctx = file_context(path, defaults, source_name="s", first_seen_at=LANDED, original_path=original_path or None)
    result = quote_csv.parse(ctx)
    assert result.quarantined.height == 0, result.quarantined
    return result.accepted.sort("row_number")


def test_a_rows_own_date_wins_then_the_source_default():
    rows = _parse(CASES / "source_default.csv", {"observed_at": "2026-03-01T00:00:00+00:00"})
    assert rows["observed_at_basis"].to_list() == ["source_default", "row"]
    assert rows["observed_at"].to_list() == [dt.datetime(2026, 3, 1, tzinfo=dt.timezone.utc),
                                             dt.datetime(2026, 7, 1, tzinfo=dt.timezone.utc)]


@pytest.mark.parametrize("original, basis", [("", "landed_at"),
                                             ("https://api.example.com/v2/plans", "fetched_at")])
def test_without_a_date_the_arrival_time_is_used_and_named(original, basis):
    rows = _parse(CASES / "undated.csv", {}, original)
    assert rows["observed_at_basis"].to_list() == [basis]
    assert rows["observed_at"].to_list() == [dt.datetime(2026, 11, 30, 8, tzinfo=dt.timezone.utc)]
    assert rows["observed_at_stated"].to_list() == [False]


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory) -> Path:
    """The dated/undated fixtures beside the real MLPerf MI300X runs, refreshed once (730-day limit)."""
    root = tmp_path_factory.mktemp("observed-at")
    sources = write_sources(root, [
        {"name": "dated", "kind": "quotes", "format": "quote-csv", "path": str(CASES / "dated.csv"),
         "max_quote_age_days": 730},
        {"name": "a-undated", "kind": "quotes", "format": "quote-csv", "path": str(CASES / "undated.csv"),
         "max_quote_age_days": 730},
        {"name": "defaulted", "kind": "quotes", "format": "quote-csv", "path": str(CASES / "source_default.csv"),
         "defaults": {"observed_at": "2026-03-01"}, "max_quote_age_days": 730},
        {"name": "drop", "kind": "quotes", "format": "quote-csv", "path": str(CASES / "drop" / "*.csv"),
         "max_quote_age_days": 730},
        {"name": "mlperf", "kind": "benchmarks", "format": "mlperf-summary",
         "path": str(DATA_DIR / "samples/benchmarks/mlperf_v4.1/**/mlperf_log_summary.txt"),
         "defaults": {"model_id": "llama-2-70b", "precision": "fp8"}},
    ])
    path = root / "wh" / "provider_eval.duckdb"
    state = run_refresh(path, sources)
    assert state.is_completed(), state.message
    return path


def test_offers_show_the_basis_and_an_undated_price_is_of_unknown_age(warehouse):
    rows = {r[0]: r[1:] for r in query(warehouse, """
        select source_name || '/' || offer_id, observed_at_basis, stale_reason,
               list_contains(warnings, 'OBSERVED_AT_UNKNOWN')
        from offers""")}
    assert rows["dated/acme-mi300x-8"] == ("row", None, False)
    assert rows["defaulted/acme-mi325x-8"] == ("source_default", None, False)
    assert rows["defaulted/acme-mi325x-1"] == ("row", None, False)
    # Landed today, but its age is unknown: it cannot pass the 730-day limit as if fresh.
    assert rows["a-undated/acme-mi300x-8"] == ("landed_at", "QUOTE_AGE_UNKNOWN", True)


def test_within_a_source_a_dated_file_beats_a_later_undated_one(warehouse):
    assert query(warehouse, "select usd_per_gpu_hour::double, observed_at_basis from offers "
                            "where source_name = 'drop'") == [(2.10, "row")]


def test_across_sources_the_dated_observation_is_costed(warehouse):
    # The undated copy (8.00/h, landed today, source name first in order) used to win as "newest".
    rows = query(warehouse, """
        select source_name, usd_per_node_hour::double, also_seen_in from workload_costs
        where workload_id = 'llama2-70b-fp8-offline-tokens' and provider = 'acme-cloud'
          and gpu_model = 'MI300X'""")
    assert len(rows) == 1
    source, price, also = rows[0]
    assert (source, price) == ("dated", 17.52)
    assert len(also) == 1 and also[0].startswith("a-undated (acme-mi300x-8, undated, landed ")
