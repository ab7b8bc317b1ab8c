"""quote-yaml: one quote with several billing options maps to the same canonical rows as quote-csv."""
import polars as pl
import pytest

from tests.conftest import FIXTURES
from tests.ingest.test_quote_bad_inputs import stage

YAML = FIXTURES / "quotes" / "yaml"
LINEAGE = ["source_file", "file_sha256", "row_number"]
KEY = ["billing_model", "tier", "commitment_term_hours"]


def test_yaml_and_csv_give_the_same_canonical_rows(tmp_path):
    y_out, y_rows, y_q = stage(YAML / "quote_multi.yaml", tmp_path / "y", fmt="quote-yaml")
    c_out, c_rows, c_q = stage(YAML / "quote_multi.csv", tmp_path / "c")
    assert (y_out.rows_in, y_rows.height, y_q.height) == (8, 8, 0)
    assert (c_out.rows_in, c_rows.height, c_q.height) == (8, 8, 0)
    y = y_rows.drop(LINEAGE).sort(KEY, nulls_last=True)
    c = c_rows.drop(LINEAGE).sort(KEY, nulls_last=True)
    assert y.schema == c.schema
    assert y.to_dicts() == c.to_dicts()


def test_every_billing_option_is_one_row(tmp_path):
    _, rows, _ = stage(YAML / "quote_multi.yaml", tmp_path, fmt="quote-yaml")
    options = set(rows.select(pl.struct(KEY)).to_series().map_elements(
        lambda s: (s["billing_model"], s["tier"], s["commitment_term_hours"] and int(s["commitment_term_hours"])),
        return_dtype=pl.Object).to_list())
    assert options == {
        ("on_demand", None, None), ("on_demand", "community", None), ("on_demand", "secure", None),
        ("spot", None, None), ("monthly", None, None), ("dedicated", None, None),
        ("reserved", None, 168), ("reserved", None, 26280),
    }
    # Quote-level fields reach every option; an option's own value wins where it has one.
    assert rows["gpu_model"].unique().to_list() == ["MI300X"]
    assert rows["rocm_version"].unique().to_list() == ["6.4.1"]
    reserved_3y = rows.filter(pl.col("commitment_term_hours") == 26280).to_dicts()[0]
    assert reserved_3y["notes"] == "3-year commitment, hypothetical"
    dedicated = rows.filter(pl.col("billing_model") == "dedicated").to_dicts()[0]
    assert (int(dedicated["min_term_hours"]), int(dedicated["setup_fee"])) == (2190, 500)
    # row_number is the line where the option starts, so a message points into the file.
    assert rows.filter(pl.col("billing_model") == "spot")["row_number"].to_list() == [37]


def test_one_bad_option_is_quarantined_and_the_rest_load(tmp_path):
    out, rows, quarantined = stage(YAML / "one_bad_option.yaml", tmp_path, fmt="quote-yaml")
    assert out.rows_in == 4 == rows.height + quarantined.height
    assert quarantined.select("row_number", "reason_code").to_dicts() == [
        {"row_number": 10, "reason_code": "PRICE_NONFINITE"}]
    # A quote without `billing:` is its own single option.
    assert sorted(rows["offer_id"].to_list()) == ["ex-flat", "ex-mi325x-1", "ex-mi325x-1"]


@pytest.mark.parametrize("name,code,words", [
    ("duplicate_key.yaml", "YAML_MALFORMED", "duplicate key 'price'"),
    ("invalid_syntax.yaml", "YAML_MALFORMED", "line 4"),
    ("unknown_key.yaml", "SCHEMA_DRIFT", "unknown key(s) ['discount_pct']"),
    ("option_key_on_quote.yaml", "SCHEMA_DRIFT", "['price'] belong in each 'billing' option"),
    ("nested_value.yaml", "SCHEMA_DRIFT", "gpu_model: expected a single value, got a mapping"),
    ("not_a_mapping.yaml", "SCHEMA_DRIFT", "top-level 'quotes:'"),
    ("empty.yaml", "EMPTY", "empty"),
    ("latin1.yaml", "ENCODING", "not UTF-8"),
])
def test_whole_file_rejections(tmp_path, name, code, words):
    out, _, _ = stage(YAML / name, tmp_path, fmt="quote-yaml")
    assert out.status == "rejected"
    assert out.reason.startswith(code + ": ") and words in out.reason, out.reason
    assert str(tmp_path) not in out.reason  # the user's file name, not the landing path


@pytest.mark.parametrize("doc,fence,fmt", [
    ("quote-csv.md", "csv", "quote-csv"),
    ("quote-yaml.md", "yaml", "quote-yaml"),
])
def test_documented_examples_load_without_quarantine(tmp_path, doc, fence, fmt):
    """The per-billing-model examples in docs/formats/ are real, loadable files."""
    from provider_eval.paths import PROJECT_ROOT

    text = (PROJECT_ROOT / "docs" / "formats" / doc).read_text(encoding="utf-8")
    blocks = text.split(f"```{fence}\n")[1:]
    example = blocks[-1].split("```", 1)[0]  # the last block of that language is the full example
    path = tmp_path / f"example.{fence}"
    path.write_text(example, encoding="utf-8")
    out, rows, quarantined = stage(path, tmp_path, fmt=fmt)
    assert out.status == "loaded", out.reason
    assert quarantined.height == 0, quarantined.to_dicts()
    assert set(rows["billing_model"]) == {"on_demand", "spot", "monthly", "dedicated", "reserved"}
    assert set(rows["tier"].drop_nulls()) == {"community", "secure"}
