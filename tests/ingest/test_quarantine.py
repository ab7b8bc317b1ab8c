"""Bad quote rows land in quarantine with a reason; bad files are rejected in the manifest; nothing is lost."""
import pytest

from tests.conftest import FIXTURES, query, run_refresh, write_sources

EXPECTED_REASONS = {
    2: "PRICE_NONPOSITIVE",
    3: "PRICE_NONFINITE",
    4: "PRICE_NOT_NUMERIC",
    5: "GPU_ALIAS_UNKNOWN",
    6: "CURRENCY_UNKNOWN",
    7: "GPU_COUNT_INVALID",
    8: "UNIT_MISSING",
    9: "CONTRACT_VIOLATION",
    10: "DUPLICATE_IN_FILE",
}


@pytest.fixture(scope="module")
def bad_input_warehouse(tmp_path_factory):
    root = tmp_path_factory.mktemp("bad")
    (root / "quotes.csv").write_bytes((FIXTURES / "quotes" / "mixed_good_and_bad.csv").read_bytes())
    (root / "empty.csv").write_text("")
    (root / "drift.csv").write_text("provider,offer,gpu,price\nacme,x,MI300X,2\n")
    (root / "latin1.csv").write_bytes("provider,offer_id\ncaf\xe9,x\n".encode("latin-1"))
    sources = write_sources(root, [
        {"name": "acme", "kind": "quotes", "format": "quote-csv", "path": "quotes.csv"},
        {"name": "broken-files", "kind": "quotes", "format": "quote-csv", "path": "[edl]*.csv"},
    ])
    warehouse = root / "w.duckdb"
    state = run_refresh(warehouse, sources=sources)
    assert state.is_completed(), state.message
    return warehouse


def test_each_bad_row_is_quarantined_with_its_reason(bad_input_warehouse):
    rows = dict(query(bad_input_warehouse,
                      "select row_number, reason_code from quarantine where source_name = 'acme'"))
    assert rows == EXPECTED_REASONS


def test_quarantine_names_file_row_and_field(bad_input_warehouse):
    source_file, detail, raw = query(bad_input_warehouse, """
        select file, detail, raw_record from quarantine
        where source_name = 'acme' and row_number = 2""")[0]
    assert source_file == "quotes.csv"
    assert "price" in detail and "-2.49" in detail
    assert '"offer_id":"neg-1"' in raw.replace(" ", "")


def test_the_good_row_still_loads_and_ranks_nothing_without_evidence(bad_input_warehouse):
    assert query(bad_input_warehouse, "select offer_id, gpu_model, usd_per_gpu_hour::varchar from offers") == [
        ("good-1", "MI300X", "1.990000")]


def test_rows_are_conserved(bad_input_warehouse):
    assert query(bad_input_warehouse, """
        select rows_in, rows_accepted, rows_quarantined from ingest_manifest where source_name = 'acme'""") == [
        (10, 1, 9)]


def test_unreadable_files_are_rejected_with_a_reason_and_the_refresh_goes_on(bad_input_warehouse):
    rejected = query(bad_input_warehouse, """
        select regexp_extract(original_path, '[^/]+$'), status, split_part(reason, ':', 1)
        from ingest_manifest where source_name = 'broken-files' order by 1""")
    assert rejected == [
        ("drift.csv", "rejected", "SCHEMA_DRIFT"),
        ("empty.csv", "rejected", "EMPTY"),
        ("latin1.csv", "rejected", "ENCODING"),
    ]
