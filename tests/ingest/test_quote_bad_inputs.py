"""quote-csv against the bad-input catalogue (shared reference reliability_and_bad_inputs.md §4.4).

Each case is a fixture in tests/fixtures/quotes/ with its expected outcome: Q (row quarantined with
a reason code), F (whole file rejected in the manifest), A (accepted). Files go through the real
landing and stage_file() path; the refresh-level cases (N, scope, staleness) are in
test_quotes_refresh.py.
"""
import csv
import datetime as dt
import json
from decimal import Decimal
from pathlib import Path

import polars as pl
import pytest

from flows.ingest.land import land_file
from flows.ingest.stage import stage_file
from tests.conftest import FIXTURES

QUOTES = FIXTURES / "quotes"
NOW = dt.datetime(2026, 11, 29, 12, 0, tzinfo=dt.timezone.utc)


def stage(path: Path, tmp_path: Path, defaults: dict | None = None, fmt: str = "quote-csv"):
    """Land and stage one file; return (outcome, accepted frame, quarantine frame)."""
    landed = land_file("fixture", path, tmp_path / "landing", NOW)
    outcome = stage_file(landed, fmt, defaults or {}, tmp_path / "staged")
    if outcome.status != "loaded":
        return outcome, None, None
    return outcome, pl.read_parquet(outcome.accepted_parquet), pl.read_parquet(outcome.quarantine_parquet)


def expected_rows() -> list[tuple[int, str, str]]:
    """(row number, offer_id, expected outcome) read from row_cases.csv with the stdlib reader."""
    with open(QUOTES / "row_cases.csv", newline="", encoding="utf-8") as fh:
        records = list(csv.DictReader(fh))
    seen: dict[str, int] = {}
    out = []
    for number, rec in enumerate(records, start=1):
        expect = rec["notes"].removeprefix("expect: ").rsplit(" (", 1)[0]
        if "|" in expect:  # a repeated offer lists each occurrence's outcome in order
            occurrence = seen.get(rec["offer_id"], 0)
            seen[rec["offer_id"]] = occurrence + 1
            expect = expect.split("|")[occurrence]
        out.append((number, rec["offer_id"], expect))
    return out


@pytest.fixture(scope="module")
def row_cases(tmp_path_factory):
    return stage(QUOTES / "row_cases.csv", tmp_path_factory.mktemp("rows"))


CASES = expected_rows()


@pytest.mark.parametrize("row_number,offer_id,expect", CASES, ids=[f"{r}-{o}" for r, o, _ in CASES])
def test_row_case_outcome(row_cases, row_number, offer_id, expect):
    _, accepted, quarantined = row_cases
    got_q = quarantined.filter(pl.col("row_number") == row_number)
    got_a = accepted.filter(pl.col("row_number") == row_number)
    if expect == "A":
        assert got_a.height == 1 and got_q.height == 0, got_q.to_dicts()
        assert got_a["offer_id"][0] == offer_id
    else:
        code = expect.removeprefix("Q ")
        assert got_a.height == 0
        assert got_q["reason_code"].to_list() == [code], got_q.to_dicts()
        # The message names the field's value or the rule, and the raw row is kept.
        assert got_q["detail"][0]
        assert got_q["raw_record"][0]


def test_row_cases_conserve_rows(row_cases):
    outcome, accepted, quarantined = row_cases
    assert outcome.status == "loaded"
    assert outcome.rows_in == len(CASES) == accepted.height + quarantined.height
    assert sorted(accepted["row_number"].to_list() + quarantined["row_number"].to_list()) == list(
        range(1, len(CASES) + 1))


def test_normalised_values(row_cases):
    """Accepted rows carry the normalised value, not the text."""
    _, accepted, _ = row_cases
    by_id = {r["offer_id"]: r for r in accepted.to_dicts()}
    assert by_id["float-drift"]["price_amount"] == Decimal("2.490000")  # #12: DECIMAL, no float drift
    assert by_id["price-padded"]["price_amount"] == Decimal("2.490000")
    assert {by_id[k]["currency"] for k in ("currency-lower", "currency-us-dollar-sign")} == {"USD"}
    assert by_id["currency-euro-sign"]["currency"] == "EUR"
    assert by_id["currency-pound-sign"]["currency"] == "GBP"
    assert by_id["time-plus-eight"]["observed_at"] == dt.datetime(2026, 1, 15, 2, 0, tzinfo=dt.timezone.utc)
    assert by_id["time-plus-eight"]["observed_at_stated"] is True
    assert by_id["per-second"]["observed_at_stated"] is False
    assert by_id["alias-h100-sxm5"]["gpu_model"] == "H100 SXM"
    for key in ("alias-oam", "alias-amd-instinct", "alias-runpod", "alias-lower-192gb", "alias-paren-192gb",
                "alias-spacing-case"):
        assert by_id[key]["gpu_model"] == "MI300X"
    assert by_id["vram-node-total-declared"]["vram_bytes_stated"] == 192 * 10**9
    assert by_id["tier-community"]["tier"] == "community"


FILE_CASES = [
    # (fixture, expected: "F CODE" or "A n_accepted n_quarantined")
    ("bom.csv", "A 2 0"),
    ("crlf.csv", "A 2 0"),
    ("quoted_newline.csv", "A 2 0"),
    ("semicolon.csv", "F SCHEMA_DRIFT"),
    ("unbalanced_quote.csv", "F CSV_MALFORMED"),
    ("trailing_delimiter.csv", "F SCHEMA_DRIFT"),
    ("ragged.csv", "A 2 2"),
    ("truncated_mid_row.csv", "A 1 1"),
    ("no_header.csv", "F SCHEMA_DRIFT"),
    ("empty.csv", "F EMPTY"),
    ("blank_lines_only.csv", "F EMPTY"),
    ("header_only.csv", "A 0 0"),
    ("latin1.csv", "F ENCODING"),
    ("cp1252_quotes.csv", "F ENCODING"),
    ("utf16le_bom.csv", "F ENCODING"),
    ("invalid_ff.csv", "F ENCODING"),
    ("gbk.csv", "F ENCODING"),
    ("column_added.csv", "F SCHEMA_DRIFT"),
    ("column_removed.csv", "F SCHEMA_DRIFT"),
    ("column_renamed.csv", "F SCHEMA_DRIFT"),
    ("column_reordered.csv", "A 1 0"),
    ("reserialised.csv", "A 2 0"),
    ("good.csv", "A 2 0"),
]


@pytest.mark.parametrize("name,expect", FILE_CASES, ids=[n for n, _ in FILE_CASES])
def test_file_case_outcome(tmp_path, name, expect):
    outcome, accepted, quarantined = stage(QUOTES / name, tmp_path)
    kind, *rest = expect.split()
    if kind == "F":
        assert outcome.status == "rejected"
        assert outcome.reason.startswith(rest[0] + ": "), outcome.reason
        assert outcome.rows_accepted == outcome.rows_quarantined == 0
        assert outcome.accepted_parquet is None  # nothing partial is loaded
    else:
        assert outcome.status == "loaded", outcome.reason
        assert (accepted.height, quarantined.height) == (int(rest[0]), int(rest[1]))
        assert outcome.rows_in == accepted.height + quarantined.height


def test_a_header_only_file_keeps_the_contract_types(tmp_path):
    """#34: an empty member of a multi-file source must not collapse column types when loaded."""
    from flows.load import contract_schema
    from models.offers import QuoteObservation

    outcome, accepted, _ = stage(QUOTES / "header_only.csv", tmp_path)
    assert accepted.height == 0
    assert accepted.schema == pl.Schema(contract_schema(QuoteObservation))


def test_ragged_rows_are_quarantined_one_by_one(tmp_path):
    _, accepted, quarantined = stage(QUOTES / "ragged.csv", tmp_path)
    assert accepted["offer_id"].to_list() == ["acme-1", "acme-8"]
    rows = {r["row_number"]: r for r in quarantined.to_dicts()}
    assert set(rows) == {2, 4}
    assert {r["reason_code"] for r in rows.values()} == {"ROW_RAGGED"}
    assert "7 field(s) where the header has 10" in rows[2]["detail"]
    # Fields beyond the header are kept in the raw record, not dropped.
    assert json.loads(json.loads(rows[4]["raw_record"])["_extra_fields"]) == ["extra", "fields"]


def test_rejections_name_the_problem(tmp_path):
    semicolon, *_ = stage(QUOTES / "semicolon.csv", tmp_path / "a")
    assert "delimited by something other than ','" in semicolon.reason
    renamed, *_ = stage(QUOTES / "column_renamed.csv", tmp_path / "b")
    assert "missing column(s) ['price']" in renamed.reason and "['hourly_price']" in renamed.reason
    latin, *_ = stage(QUOTES / "latin1.csv", tmp_path / "c")
    assert "not UTF-8" in latin.reason


def _big_file(path: Path, rows: int, last_row: str) -> Path:
    head = "provider,offer_id,gpu_model,gpus_per_node,price,currency,price_unit,price_scope,billing_model,notes\n"
    body = "".join(f"acme,o{i},MI300X,1,2.49,USD,hour,per_gpu,on_demand,row {i}\n" for i in range(rows))
    path.write_text(head + body + last_row + "\n", encoding="utf-8")
    return path


def test_non_ascii_after_the_sniff_window_is_read(tmp_path):
    """#31: the first 20,480 rows are ASCII, a later one is UTF-8 (é): read, not rejected."""
    path = _big_file(tmp_path / "late_utf8.csv", 20_480, "acme,late,MI300X,1,2.49,USD,hour,per_gpu,on_demand,caf\u00e9")
    outcome, accepted, _ = stage(path, tmp_path)
    assert outcome.rows_accepted == 20_481
    assert accepted.filter(pl.col("offer_id") == "late")["notes"][0] == "caf\u00e9"


def test_type_drift_after_many_rows_quarantines_that_row(tmp_path):
    """#32: 30,000 whole-number GPU counts then '1.5': no inferred schema, only that row is quarantined."""
    path = _big_file(tmp_path / "drift.csv", 30_000, "acme,drift,MI300X,1.5,2.49,USD,hour,per_gpu,on_demand,late")
    outcome, accepted, quarantined = stage(path, tmp_path)
    assert (outcome.rows_accepted, outcome.rows_quarantined) == (30_000, 1)
    assert quarantined.to_dicts()[0]["reason_code"] == "GPU_COUNT_INVALID"
    assert quarantined.to_dicts()[0]["row_number"] == 30_001


def test_file_level_currency_default_and_conflict(tmp_path):
    """#6: a currency given once for the source fills the rows; a row that contradicts it is quarantined."""
    path = tmp_path / "eur.csv"
    path.write_text(
        "provider,offer_id,gpu_model,gpus_per_node,price,price_unit,price_scope,billing_model,currency\n"
        "acme,a,MI300X,1,2.10,hour,per_gpu,on_demand,\n"
        "acme,b,MI300X,1,2.10,hour,per_gpu,on_demand,USD\n", encoding="utf-8")
    _, accepted, quarantined = stage(path, tmp_path, defaults={"currency": "EUR"})
    assert accepted["currency"].to_list() == ["EUR"]
    assert quarantined["reason_code"].to_list() == ["DEFAULT_CONFLICT"]
