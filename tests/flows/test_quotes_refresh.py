"""Quotes through the real refresh flow: bad files beside good ones, FX, scope, staleness, idempotency."""
import shutil
from decimal import Decimal

import pytest

from flows.refresh import PUBLIC_TABLES
from provider_eval.paths import DATA_DIR
from tests.conftest import FIXTURES, left_as_found, query, run_refresh, write_sources

QUOTES = FIXTURES / "quotes"


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> dict:
    """Fixture sources refreshed once, then again unchanged; both warehouses' tables are kept."""
    root = tmp_path_factory.mktemp("quotes-refresh")
    drop = root / "drop"
    drop.mkdir()
    shutil.copy(QUOTES / "good.csv", drop / "good.csv")
    shutil.copy(QUOTES / "good.csv", drop / "good (copy).csv")  # same bytes, another name (#35)
    sources = write_sources(root, [
        {"name": "seed-quotes", "kind": "quotes", "format": "quote-csv",
         "path": str(DATA_DIR / "samples/quotes/seed_000_example.csv"), "defaults": {"currency": "USD"}},
        {"name": "seed-runs", "kind": "benchmarks", "format": "run-csv",
         "path": str(DATA_DIR / "samples/benchmarks/seed_000_runs.csv")},
        {"name": "row-cases", "kind": "quotes", "format": "quote-csv", "path": str(QUOTES / "row_cases.csv")},
        {"name": "broken", "kind": "quotes", "format": "quote-csv", "path": str(QUOTES / "latin1.csv")},
        {"name": "ragged", "kind": "quotes", "format": "quote-csv", "path": str(QUOTES / "ragged.csv")},
        {"name": "drop-folder", "kind": "quotes", "format": "quote-csv", "path": "drop/*.csv"},
        {"name": "scope", "kind": "quotes", "format": "quote-csv", "path": str(QUOTES / "refresh/scope.csv")},
        {"name": "stale", "kind": "quotes", "format": "quote-csv", "path": str(QUOTES / "refresh/stale.csv"),
         "max_quote_age_days": 365},
        {"name": "fx", "kind": "quotes", "format": "quote-csv", "path": str(QUOTES / "refresh/eur.csv")},
        {"name": "yaml-quote", "kind": "quotes", "format": "quote-yaml",
         "path": str(QUOTES / "yaml/quote_multi.yaml")},
        {"name": "yaml-quote-runs", "kind": "benchmarks", "format": "run-csv",
         "path": str(QUOTES / "refresh/runs_mi300x8.csv")},
    ])
    warehouse = root / "wh" / "provider_eval.duckdb"
    state = run_refresh(warehouse, sources)
    assert state.is_completed(), state.message
    # input_files counts the reads themselves (last_seen_at, reads): everything else must not move.
    select = {t: "* exclude (last_seen_at, reads)" if t == "input_files" else "*" for t in PUBLIC_TABLES}
    first = {t: sorted(map(repr, query(warehouse, f'select {select[t]} from "{t}"'))) for t in PUBLIC_TABLES}
    state = run_refresh(warehouse, sources)
    assert state.is_completed(), state.message
    second = {t: sorted(map(repr, query(warehouse, f'select {select[t]} from "{t}"'))) for t in PUBLIC_TABLES}
    return {"root": root, "drop": drop, "sources": sources, "warehouse": warehouse,
            "first": first, "second": second}


def one(world, sql, params=None):
    return query(world["warehouse"], sql, params)


def test_refreshing_twice_changes_no_table(world):
    for table in PUBLIC_TABLES:
        assert world["first"][table] == world["second"][table], table


def test_a_broken_file_is_rejected_and_the_rest_load(world):
    rows = dict(one(world, "select source_name, status || coalesce(': ' || reason, '') from ingest_manifest "
                           "where source_name in ('broken', 'ragged', 'row-cases', 'yaml-quote')"))
    assert rows["broken"].startswith("rejected: ENCODING: not UTF-8")
    assert rows["ragged"] == rows["row-cases"] == rows["yaml-quote"] == "loaded"
    assert one(world, "select count(*) from offers where source_name = 'yaml-quote'") == [(8,)]


def test_same_bytes_under_another_name_is_a_no_op(world):
    # Landing is content-addressed: the second name maps to the stored file, nothing is loaded twice.
    statuses = sorted(one(world, "select status from ingest_manifest where source_name = 'drop-folder'"))
    assert statuses == [("loaded",)]
    assert one(world, "select count(*) from offer_history where source_name = 'drop-folder'") == [(2,)]


def test_row_cases_file_counts_every_row(world):
    # Conservation itself is the assert_rows_conserved data test, which gated this publish.
    [(rows_in, quarantined)] = one(world, "select distinct rows_in, rows_quarantined from ingest_manifest "
                                          "where source_name = 'row-cases' and status = 'loaded'")
    assert rows_in == 89 and quarantined > 50


def test_quarantine_rows_name_file_row_and_reason(world):
    rows = one(world, "select file, row_number, reason_code, detail from quarantine "
                      "where source_name = 'ragged' order by row_number")
    assert [(r[0], r[1], r[2]) for r in rows] == [("ragged.csv", 2, "ROW_RAGGED"), ("ragged.csv", 4, "ROW_RAGGED")]


def test_fx_conversion_uses_the_rate_of_the_observation_date(world):
    rows = dict(one(world, "select offer_id, usd_per_gpu_hour from offers where source_name = 'fx'"))
    assert rows["eur-2026"] == Decimal("2.099000")    # 2.00 EUR × 1.0495 (ECB 2024-11-25)
    assert rows["eur-2022"] == Decimal("2.437400")    # 2.00 EUR × 1.2187 (ECB 2021-06-03)
    assert rows["gbp-2026"] == Decimal("2.514827")    # 2.00 GBP × 1.257413287
    assert rows["eur-2020"] is None                    # before any EUR rate: no USD value, never guessed
    reasons = dict(one(world, "select offer_id, exclusion_reasons from workload_costs where source_name = 'fx'"))
    assert "FX_RATE_MISSING" in reasons["eur-2020"]
    assert "FX_RATE_MISSING" not in reasons["eur-2026"]


def test_scope_suspects_are_flagged_and_not_ranked(world):
    flags = dict(one(world, "select offer_id, scope_reason from offers where source_name = 'scope'"))
    assert flags == {
        "scope-1gpu": None, "scope-8gpu-correct": None,
        "scope-8gpu-node-price-as-gpu": "SCOPE_SUSPECT", "scope-8gpu-gpu-price-as-node": "SCOPE_SUSPECT",
    }
    # Flagged, not fixed: the price stays as the quote states it.
    assert one(world, "select usd_per_gpu_hour from offers where offer_id = 'scope-8gpu-node-price-as-gpu'") == [
        (Decimal("16.000000"),)]
    excluded = dict(one(world, "select offer_id, exclusion_reasons from workload_costs where source_name = 'scope'"))
    assert "SCOPE_SUSPECT" in excluded["scope-8gpu-gpu-price-as-node"]
    assert "SCOPE_SUSPECT" not in excluded["scope-1gpu"]


def test_no_false_scope_flags_on_the_samples(world):
    assert one(world, "select count(*) from offers where is_scope_suspect and source_name != 'scope'") == [(0,)]


def test_stale_quotes_carry_their_reason_and_are_excluded(world):
    rows = dict(one(world, "select offer_id, stale_reason from offers where source_name = 'stale'"))
    # stale-fresh states no observed_at: landed today, its age is unknown, so it cannot pass the limit
    # as if fresh (issue 16; it was None while the landing time stood in for a date).
    assert rows == {"stale-expired": "QUOTE_EXPIRED", "stale-too-old": "QUOTE_TOO_OLD",
                    "stale-not-yet": "QUOTE_NOT_YET_VALID", "stale-fresh": "QUOTE_AGE_UNKNOWN"}
    costs = dict(one(world, "select offer_id, exclusion_reasons from workload_costs where source_name = 'stale'"))
    assert "QUOTE_TOO_OLD" in costs["stale-too-old"] and "QUOTE_EXPIRED" in costs["stale-expired"]
    assert one(world, "select count(*) from rankings where source_name = 'stale'") == [(0,)]
    # Without a max age (other sources), an old observation is not stale for its age.
    assert one(world, "select stale_reason from offers where offer_id = 'eur-2020'") == [(None,)]


def test_billed_hours_follow_granularity_minimum_term_and_commitment(world):
    """The task takes 1 h: per-second on-demand bills 1 h; a dedicated minimum term or a commitment bills it all."""
    rows = one(world, "select billing_model, tier, commitment_term_hours, hours_billed from workload_costs "
                      "where source_name = 'yaml-quote' and workload_id = 'seed-000-same-task'")
    billed = {(b, t, c and int(c)): h for b, t, c, h in rows}
    assert billed[("on_demand", None, None)] == Decimal("1")
    assert billed[("dedicated", None, None)] == Decimal("2190")
    assert billed[("reserved", None, 168)] == Decimal("168")
    assert billed[("reserved", None, 26280)] == Decimal("26280")
    assert billed[("on_demand", "community", None)] == Decimal("1")


def test_the_seed_example_still_ranks(world):
    ranked = one(world, "select gpu_model from rankings where workload_id = 'seed-000-same-task' "
                        "and source_name = 'seed-quotes' order by rank")
    assert [r[0] for r in ranked] == ["MI350X", "MI325X", "MI300X"]


def test_reserialised_content_adds_no_history_row(world, tmp_path_factory):
    """#36: the same offers in another serialisation arrive in the drop folder: a new file, no new row."""
    with left_as_found(world["root"]):  # the module's other tests keep the world they were given
        shutil.copy(QUOTES / "reserialised.csv", world["drop"] / "reserialised.csv")
        try:
            state = run_refresh(world["warehouse"], world["sources"])
            assert state.is_completed(), state.message
            assert one(world, "select count(*) from offer_history where source_name = 'drop-folder'") == [(2,)]
            assert one(world, "select min(times_observed) from offer_history where source_name = 'drop-folder'") == [(2,)]
            assert sorted(one(world, "select status from ingest_manifest where source_name = 'drop-folder'")) == [
                ("loaded",), ("loaded",)]
        finally:
            (world["drop"] / "reserialised.csv").unlink()
