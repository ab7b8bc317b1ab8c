"""A month of scheduled refreshes, condensed (#17): a catalog fetched from a real loopback HTTP server
whose offers appear, change price, disappear (and come back), a failed fetch, and a quote file
corrected in place. History, current offers, availability and rankings are checked on chosen days.

Eight refreshes, not thirty: each takes ~10 s on 2 cores, and eight cover every event (the other
days of a month would be repeats of day 3 or day 6).
"""
import copy
import json

import pytest

from provider_eval.paths import DATA_DIR
from tests.conftest import query, run_refresh, write_sources
from tests.http_fixture_server import FixtureServer

CATALOG = DATA_DIR / "samples" / "quotes" / "catalogs" / "digitalocean_v2_sizes.json"
MI300X = next(s for s in json.loads(CATALOG.read_text())["sizes"] if s["slug"] == "gpu-mi300x8-1536gb")
WORKLOAD = "llama2-70b-fp8-offline-tokens"
QUOTE_HEADER = "provider,offer_id,gpu_model,gpus_per_node,price,currency,price_unit,price_scope,billing_model\n"


def _catalog(offers: dict[str, str]) -> bytes:
    """A DigitalOcean /v2/sizes body: the real MI300X size under each slug at a price per GPU-hour."""
    sizes = []
    for slug, per_gpu in offers.items():
        size = copy.deepcopy(MI300X)
        size.update(slug=slug, price_hourly=round(8 * float(per_gpu), 2), price_monthly=None)
        sizes.append(size)
    return json.dumps({"sizes": sizes}).encode()


# Day → (catalog offers, or None when the provider is down that day; acme's quoted $/GPU-h).
DAYS = {
    1: ({"gpu-mi300x8-1536gb": "1.99"}, "2.50"),
    2: ({"gpu-mi300x8-1536gb": "1.99", "gpu-mi300x8-new": "1.50"}, "2.50"),  # a new offer appears
    3: ({"gpu-mi300x8-1536gb": "1.89", "gpu-mi300x8-new": "1.50"}, "2.50"),  # a price changes
    4: (None, "2.50"),  # the catalog API is down: nothing may change
    5: ({"gpu-mi300x8-1536gb": "1.89"}, "2.50"),  # the new offer is gone (first read without it: grace)
    6: ({"gpu-mi300x8-1536gb": "1.89"}, "2.50"),  # still gone: NOT_LISTED
    7: ({"gpu-mi300x8-1536gb": "1.89"}, "1.75"),  # acme's quote file corrected in place
    8: ({"gpu-mi300x8-1536gb": "1.89", "gpu-mi300x8-new": "1.45"}, "1.75"),  # listed again
}


def _snapshot(warehouse) -> dict:
    return {
        "offers": {r[0]: r[1:] for r in query(warehouse, """
            select offer_id, usd_per_gpu_hour::varchar, stale_reason from offers
            where billing_model = 'on_demand' order by offer_id""")},
        "history": query(warehouse, """
            select offer_id, usd_per_gpu_hour::varchar, superseded_by is not null from offer_history
            where billing_model = 'on_demand' order by offer_id, observed_at"""),
        "ranked": query(warehouse, "select offer_id from rankings where workload_id = ? and rank is not null "
                                   "order by rank", [WORKLOAD]),
        "excluded": dict(query(warehouse, "select offer_id, exclusion_reasons from workload_costs "
                                          "where workload_id = ? and len(exclusion_reasons) > 0", [WORKLOAD])),
        "manifest": query(warehouse, "select source_name, status from ingest_manifest order by all"),
        "inputs": query(warehouse, "select source_name, state from input_files order by all"),
    }


@pytest.fixture(scope="module")
def month(tmp_path_factory):
    root = tmp_path_factory.mktemp("month")
    server = FixtureServer({})
    mlperf = DATA_DIR / "samples" / "benchmarks" / "mlperf_v4.1" / "**" / "mlperf_log_summary.txt"
    workloads = root / "workloads.yaml"
    workloads.write_text(f"workloads:\n  - id: {WORKLOAD}\n    kind: inference\n    unit: output_tokens\n"
                         "    quantity: 1000000000\n    model_id: llama-2-70b\n    precision: fp8\n    engine: vllm\n")
    quote = root / "acme.csv"
    days = {}
    try:
        for day, (offers, acme) in DAYS.items():
            if offers is not None:
                server.replace("do.json", _catalog(offers))
            sources = write_sources(root, [
                {"name": "do", "kind": "quotes", "format": "digitalocean-sizes",
                 "url": server.url("ok" if offers is not None else "down", "do.json"),
                 "defaults": {"provider": "digitalocean"}, "fetch": {"attempts": 1, "timeout_s": 2}},
                {"name": "acme", "kind": "quotes", "format": "quote-csv", "path": "acme.csv"},
                {"name": "mlperf", "kind": "benchmarks", "format": "mlperf-summary", "path": str(mlperf),
                 "defaults": {"model_id": "llama-2-70b", "precision": "fp8"}},
            ])
            quote.write_text(QUOTE_HEADER + f"acme,acme-mi300x-8,MI300X,8,{acme},USD,hour,per_gpu,on_demand\n")
            state = run_refresh(root / "wh" / "w.duckdb", sources, workloads)
            assert state.is_completed(), (day, state.message)
            days[day] = _snapshot(root / "wh" / "w.duckdb")
    finally:
        server.stop()
    return days


def test_day_1_both_offers_rank(month):
    assert month[1]["offers"] == {"acme-mi300x-8": ("2.500000", None), "gpu-mi300x8-1536gb": ("1.990000", None)}
    assert month[1]["ranked"] == [("gpu-mi300x8-1536gb",), ("acme-mi300x-8",)]


def test_day_2_a_new_offer_appears_and_wins(month):
    assert month[2]["offers"]["gpu-mi300x8-new"] == ("1.500000", None)
    assert month[2]["ranked"][0] == ("gpu-mi300x8-new",)


def test_day_3_a_price_change_is_current_and_the_old_price_is_history(month):
    assert month[3]["offers"]["gpu-mi300x8-1536gb"] == ("1.890000", None)
    old = [r for r in month[3]["history"] if r[0] == "gpu-mi300x8-1536gb"]
    # The earlier catalog version was superseded by the next fetch.
    assert old == [("gpu-mi300x8-1536gb", "1.990000", True), ("gpu-mi300x8-1536gb", "1.890000", False)]


def test_day_4_a_failed_fetch_changes_nothing_current(month):
    assert month[4]["offers"] == month[3]["offers"] and month[4]["ranked"] == month[3]["ranked"]
    assert ("do", "rejected") in month[4]["manifest"] and ("do", "rejected") in month[4]["inputs"]


def test_day_5_an_offer_missing_once_is_still_listed_during_the_grace(month):
    assert month[5]["offers"]["gpu-mi300x8-new"] == ("1.500000", None)
    assert month[5]["ranked"][0] == ("gpu-mi300x8-new",)


def test_day_6_an_offer_missing_twice_is_not_listed_and_not_ranked(month):
    assert month[6]["offers"]["gpu-mi300x8-new"] == ("1.500000", "NOT_LISTED")
    assert ("gpu-mi300x8-new",) not in month[6]["ranked"]
    assert "NOT_LISTED" in month[6]["excluded"]["gpu-mi300x8-new"]
    assert month[6]["ranked"] == [("gpu-mi300x8-1536gb",), ("acme-mi300x-8",)]


def test_day_7_a_corrected_quote_file_replaces_the_old_price(month):
    assert month[7]["offers"]["acme-mi300x-8"] == ("1.750000", None)
    assert [r for r in month[7]["history"] if r[0] == "acme-mi300x-8"] == [
        ("acme-mi300x-8", "2.500000", True), ("acme-mi300x-8", "1.750000", False)]
    assert month[7]["ranked"] == [("acme-mi300x-8",), ("gpu-mi300x8-1536gb",)]


def test_day_8_an_offer_listed_again_comes_back(month):
    assert month[8]["offers"]["gpu-mi300x8-new"] == ("1.450000", None)
    assert month[8]["ranked"][0] == ("gpu-mi300x8-new",)
    # Nothing was deleted: every price ever seen is history.
    assert [r[1] for r in month[8]["history"] if r[0] == "gpu-mi300x8-new"] == ["1.500000", "1.450000"]
