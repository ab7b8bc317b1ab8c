"""offer_history groups observations by their content (observation_hash): two quotes that differ in any
field are two groups. The hash once joined the fields with concat_ws, which skips empty fields, so a
value that sat in a neighbouring column (a quote valid from a day against one valid until it) gave the
same text, and offer_history kept one of the two quotes and counted it twice."""
import datetime as dt
from decimal import Decimal

import pytest

from tests.sql_chain import chain, rebuild, rows

DAY = dt.date(2026, 12, 1)


def _quote(file_sha256: str, **fields) -> dict:
    """One accepted quote-csv row of file file_sha256 (the same offer and price in every test row)."""
    return {"source_name": "quotes", "source_file": f"{file_sha256}.csv", "file_sha256": file_sha256,
            "row_number": 1, "provider": "p", "offer_id": "o1", "gpu_model": "MI300X", "gpu_name_raw": "MI300X",
            "gpus_per_node": 8, "billing_model": "on_demand", "price_amount": Decimal("16"), "currency": "USD",
            "price_unit": "hour", "price_scope": "per_node", "billing_granularity": "hour",
            "min_term_hours": Decimal(0), "storage_per_gb_month": Decimal(0), "egress_per_gb": Decimal(0),
            "licence_per_hour": Decimal(0), "setup_fee": Decimal(0), "support_per_month": Decimal(0),
            "observed_at": dt.datetime(2026, 11, 20, tzinfo=dt.timezone.utc), "observed_at_stated": True,
            "observed_at_basis": "row", "quote_status": "quoted", "cost_lines_stated": True, **fields}


def _history(quotes: list[dict]) -> list[dict]:
    """offer_history built from these staged quote rows alone."""
    con = chain({}, ["offer_history"])
    for quote in quotes:
        con.execute(f"insert into raw.quote_observations by name select {', '.join(f'$v{i} as {c}' for i, c in enumerate(quote))}",
                    {f"v{i}": v for i, v in enumerate(quote.values())})
    con.execute("create or replace table raw.build as select 1::bigint as build_number, 'empty' as started_from")
    rebuild(con, ["offer_history"])
    return rows(con, "select file_sha256, valid_from, valid_until, region, notes, times_observed, observation_hash "
                     "from offer_history order by file_sha256")


@pytest.mark.parametrize("first, second", [
    ({"valid_from": DAY}, {"valid_until": DAY}),
    ({"region": "eu-west"}, {"notes": "eu-west"}),
    ({"notes": "a|b"}, {"notes": "a", "rocm_version": "b"}),
], ids=["date-in-the-next-column", "text-in-the-next-column", "separator-inside-a-value"])
def test_quotes_that_differ_in_one_field_are_two_contents(first, second):
    history = _history([_quote("f1", **first), _quote("f2", **second)])
    assert [r["file_sha256"] for r in history] == ["f1", "f2"], history
    assert history[0]["observation_hash"] != history[1]["observation_hash"]
    assert [r["times_observed"] for r in history] == [1, 1]


def test_the_same_quote_in_two_files_is_one_content():
    history = _history([_quote("f1", valid_from=DAY), _quote("f2", valid_from=DAY)])
    assert len(history) == 1 and history[0]["times_observed"] == 2 and history[0]["file_sha256"] == "f1"
