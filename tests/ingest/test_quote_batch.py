"""quote-csv files of one source parsed together (one polars query) give exactly what each file gives alone."""
from pathlib import Path

import polars as pl
import pytest

from bench.synthetic import Scale, generate
from flows.ingest import stage
from flows.ingest.adapters import fields, row_rules
from tests.batch_equivalence import assert_together_equals_alone, landed_batch

ROOT = Path(__file__).resolve().parent.parent.parent
# Every quote fixture (good, bad, other formats that must be rejected) and the bundled samples.
FIXTURES = sorted((ROOT / "tests" / "fixtures" / "quotes").rglob("*.csv")) + sorted(
    (ROOT / "data" / "samples" / "quotes").glob("*.csv"))


HEADER = "offer_id,provider,gpu_model,gpus_per_node,price,currency,price_unit,price_scope,billing_model,observed_at"


def _repeats_and_times(folder: Path) -> list[Path]:
    """Two files with the same offers: repeated rows (identical and conflicting) and timestamps of every shape."""
    rows = ["a,Hot Aisle,MI300X,8,2.00,USD,hour,per_gpu,on_demand,2026-01-15T10:00:00Z",
            "a,Hot Aisle,MI300X,8,2.00,USD,hour,per_gpu,on_demand,2026-01-15T10:00:00Z",
            "a,Hot Aisle,MI300X,8,2.50,USD,hour,per_gpu,on_demand,2026-01-15T10:00:00Z",
            "b,Hot Aisle,MI300X,8,2.00,USD,hour,per_gpu,spot,2026-01-15T10:00:00+08:00",
            "c,Hot Aisle,MI300X,8,2.00,USD,hour,per_gpu,spot,2026-01-15 10:00:00.250+0800",
            "d,Hot Aisle,MI300X,8,2.00,USD,hour,per_gpu,spot,2026-01-15T10:00",
            "e,Hot Aisle,MI300X,8,2.00,USD,hour,per_gpu,spot,2026-01-15T10:00+01:00",
            "f,Hot Aisle,MI300X,8,2.00,USD,hour,per_gpu,spot,2099-01-01T00:00:00Z",
            "g,Hot Aisle,MI300X,8,2.00,USD,hour,per_gpu,spot,yesterday+01:00"]
    paths = []
    for name, order in (("repeats_a.csv", rows), ("repeats_b.csv", rows[::-1])):
        paths.append(folder / name)
        paths[-1].write_text("\n".join([HEADER, *order]) + "\n", encoding="utf-8")
    return paths


@pytest.mark.parametrize("defaults", [{}, {"currency": "USD", "max_quote_age_days": 30}])
@pytest.mark.parametrize("distinct_min_rows", [row_rules.DISTINCT_RULES_MIN_ROWS, 0])
def test_fixture_files_together_equal_alone(monkeypatch, tmp_path, defaults, distinct_min_rows):
    """Every quote fixture at once: different column layouts, bad rows, whole-file rejections."""
    monkeypatch.setattr(row_rules, "DISTINCT_RULES_MIN_ROWS", distinct_min_rows)
    batch = landed_batch(FIXTURES + _repeats_and_times(tmp_path), "quotes", "quote-csv", defaults)
    together = assert_together_equals_alone(batch)
    parsed = [p for p in together if isinstance(p, stage._Parsed)]
    assert sum(p.parsed.quarantined.height for p in parsed) > 0 and sum(p.parsed.accepted.height for p in parsed) > 0
    assert any(isinstance(p, stage.FileOutcome) for p in together)
    codes = set(pl.concat([p.parsed.quarantined for p in parsed])["reason_code"])
    assert {"DUPLICATE_IN_FILE", "CONFLICTING_DUPLICATE", "TIMESTAMP_INVALID", "DATE_IMPLAUSIBLE"} <= codes


def test_scrape_batch_together_equals_alone(tmp_path):
    """A batch of 5,000-row scrape files (with injected bad rows) big enough for distinct-value rule evaluation."""
    gen = generate(tmp_path, Scale("batch", 60_000, 5_000, 10, 2))
    batch = landed_batch([Path(p) for p in gen["quote_files"]], "quotes", "quote-csv", {})
    assert sum(1 for _ in open(gen["quote_files"][0])) - 1 == 5_000
    together = assert_together_equals_alone(batch)
    assert sum(p.parsed.rows_in for p in together) == 60_000 >= row_rules.DISTINCT_RULES_MIN_ROWS
    assert sum(p.parsed.quarantined.height for p in together) >= gen["bad_quote_rows"] > 0


def test_rules_on_distinct_values_equal_row_by_row(monkeypatch):
    """The distinct-value path gives every row the verdict the row-by-row path gives, float cells included."""
    frame = pl.DataFrame({
        "row_number": range(1, 9),
        "raw_name": ["a", "a", None, "b", "b", None, "a", "c"],
        "value": [1.0, float("nan"), -0.0, 0.0, None, float("inf"), float("nan"), 2.0],
    })
    rules = [
        row_rules.Rule("NAME_MISSING", pl.col("raw_name").is_null(), pl.lit("name is empty")),
        row_rules.Rule("NAME_B", pl.col("raw_name") == "b", pl.lit("b is refused")),
        row_rules.Rule("NOT_FINITE", ~pl.col("value").is_finite(), pl.format("{} is not finite", pl.col("value"))),
        row_rules.Rule("SIGNED_ZERO", (pl.col("value") == 0) & pl.col("raw_name").is_null(), pl.lit("zero without a name")),
    ]
    monkeypatch.setattr(row_rules, "DISTINCT_RULES_MIN_ROWS", 10**9)
    good, bad = row_rules.apply_rules(frame, rules)
    monkeypatch.setattr(row_rules, "DISTINCT_RULES_MIN_ROWS", 0)
    good_d, bad_d = row_rules.apply_rules(frame, rules)
    assert good.equals(good_d) and bad.equals(bad_d)
    assert good.height + bad.height == frame.height and bad.height > 0 and good.height > 0


TIMES = ["2026-01-15T10:00:00Z", "2026-01-15T10:00:00+08:00", "2026-01-15 10:00:00.250+0800", "2026-01-15T10:00",
         "2026-01-15T10:00+01:00", "yesterday+01:00", "", None, "2026-02-30T00:00:00Z", "2026-01-15T10:00:00.5-05:30"]


@pytest.mark.parametrize("column", [TIMES, TIMES * 50 + ["2026-01-15T10:00:00Z"] * 1_000], ids=["distinct", "repeated"])
def test_timestamps_parsed_once_per_distinct_text_equal_every_row_parsed(column):
    """as_utc_timestamp parses each distinct text once (or every row, when most are distinct): same values either way."""
    frame = pl.DataFrame({"raw_observed_at": column})
    got = frame.select(fields.as_utc_timestamp(pl.col("raw_observed_at")).alias("at"),
                       fields._parse_utc(pl.col("raw_observed_at")).alias("each"))
    assert got["at"].dtype == pl.Datetime("us", "UTC")
    assert got["at"].eq_missing(got["each"]).all() and got["at"].null_count() < got.height
    # A literal (a source default) broadcasts like any other expression.
    assert frame.select(fields.as_utc_timestamp(pl.lit("2026-01-15T10:00:00Z")).alias("at"))["at"].n_unique() == 1
