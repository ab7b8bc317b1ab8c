"""YAML inputs are read with the YAML 1.2 core schema: what the user wrote is what the contract sees.

A plain scalar that YAML 1.1 (PyYAML's default) reads as another value is quarantined in quote-yaml
(AMBIGUOUS_YAML_SCALAR, naming file, line and key) and is a ConfigError in sources.yaml and
workloads.yaml. Found by issue 23: `0123` → 83, `010` → 8, `NO` → false, `2:29` → 149.
"""
from pathlib import Path

import polars as pl
import pytest

from flows.ingest.sources import load_sources
from flows.ingest.workloads import load_workloads
from flows.ingest.yaml_lines import load_yaml_with_lines
from provider_eval.errors import ConfigError
from tests.conftest import FIXTURES
from tests.ingest.test_quote_bad_inputs import stage

QUOTE = """quotes:
  - provider: example-host
    offer_id: {offer_id}
    gpu_model: MI300X
    gpus_per_node: {gpus}
    currency: USD
    valid_from: {valid_from}
    notes: {notes}
    billing:
      - {{billing_model: on_demand, price: {price}, price_unit: hour, price_scope: per_gpu}}
"""
GOOD = dict(offer_id="ex-1", gpus="8", valid_from="2026-11-01", notes="plain text", price="2.29")


def quote(tmp_path: Path, **changes):
    path = tmp_path / "q.yaml"
    path.write_text(QUOTE.format(**{**GOOD, **changes}), encoding="utf-8")
    out, accepted, quarantined = stage(path, tmp_path / "work", fmt="quote-yaml")
    assert out.status == "loaded", out.reason
    assert out.rows_in == accepted.height + quarantined.height == 1
    return accepted, quarantined


def test_the_plain_quote_loads_with_its_values_as_written(tmp_path):
    accepted, _ = quote(tmp_path)
    row = accepted.row(0, named=True)
    assert (row["offer_id"], row["gpus_per_node"], str(row["price_amount"]), str(row["valid_from"])) == \
        ("ex-1", 8, "2.290000", "2026-11-01")


@pytest.mark.parametrize("field, value, line, old", [
    ("offer_id", "0123", 3, "83"), ("gpus", "010", 5, "8"), ("notes", "NO", 8, "False"),
    ("price", "2:29", 10, "149"), ("notes", "on", 8, "True"), ("offer_id", "1_000", 3, "1000"),
])
def test_a_scalar_yaml_1_1_reads_differently_is_quarantined_with_line_and_key(tmp_path, field, value, line, old):
    accepted, q = quote(tmp_path, **{field: value})
    assert accepted.height == 0 and q["reason_code"].to_list() == ["AMBIGUOUS_YAML_SCALAR"]
    key = {"gpus": "gpus_per_node"}.get(field, field)
    detail = q["detail"][0]
    assert detail.startswith(f"AMBIGUOUS_YAML_SCALAR: q.yaml: line {line}: {key} '{value}' reads as")
    assert old in detail and "YAML 1.2" in detail
    assert q["raw_record"].str.contains(value, literal=True)[0]  # the text as written is kept


@pytest.mark.parametrize("field, value, expect", [("offer_id", "'0123'", "0123"), ("notes", "'NO'", "NO"),
                                                   ("offer_id", '"2:29"', "2:29")])
def test_a_quoted_scalar_is_text_as_written(tmp_path, field, value, expect):
    accepted, _ = quote(tmp_path, **{field: value})
    assert accepted[field][0] == expect


def test_an_impossible_date_is_a_quarantined_row_not_a_crash(tmp_path):
    accepted, q = quote(tmp_path, valid_from="2026-02-30")
    assert accepted.height == 0 and q["reason_code"].to_list() == ["DATE_INVALID"]
    assert "valid_from '2026-02-30'" in q["detail"][0]


def test_a_complex_key_rejects_the_file_naming_the_line(tmp_path):
    path = tmp_path / "q.yaml"
    path.write_text(QUOTE.format(**GOOD) + "    ? [a, b]\n    : 1\n", encoding="utf-8")
    out, _, _ = stage(path, tmp_path / "work", fmt="quote-yaml")
    assert out.status == "rejected"
    assert out.reason == "YAML_MALFORMED: q.yaml: line 11: a key must be a plain value, not a list"


def test_core_schema_values():
    path = Path(__file__).parent.parent / "fixtures" / "quotes" / "yaml" / "quote_multi.yaml"
    doc = load_yaml_with_lines(path)
    first = doc["quotes"][0]
    assert first["valid_from"] == "2026-11-01"  # dates stay text: the contract parses them
    assert first["observed_at"] == "2026-11-20T09:30:00+01:00"
    assert first["gpus_per_node"] == 8 and first["storage_per_gb_month"] == 0.05


def test_workloads_quantity_1e400_and_ambiguous_values_are_config_errors(tmp_path):
    text = (FIXTURES / "feasibility" / "workloads.yaml").read_text()
    for value, message in (("1e400", "line 6: quantity: '1e400' reads as '1e400' in YAML 1.1"),
                           ("1.0e+400", "quantity inf is not finite"),
                           ("1.0e+40", "quantity 1e+40 is too large"),
                           ("0100", "line 6: quantity: '0100' reads as 64 in YAML 1.1 but as 100")):
        path = tmp_path / "w.yaml"
        path.write_text(text.replace("quantity: 1000", f"quantity: {value}", 1), encoding="utf-8")
        with pytest.raises(ConfigError, match=message.replace("+", r"\+").replace("(", r"\(")):
            load_workloads(path)


def test_sources_yaml_ambiguous_value_is_a_config_error(tmp_path):
    path = tmp_path / "sources.yaml"
    path.write_text("sources:\n  - name: a\n    kind: quotes\n    format: quote-csv\n    path: q.csv\n"
                    "    defaults: {region: NO}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="line 6: region: 'NO' reads as False in YAML 1.1"):
        load_sources(path)
    path.write_text(path.read_text().replace("NO}", "'NO'}"), encoding="utf-8")
    assert load_sources(path)[0].defaults == {"region": "NO"}


def test_quarantine_keeps_other_rows_of_the_file(tmp_path):
    text = QUOTE.format(**GOOD) + "      - {billing_model: spot, price: 1:30, price_unit: hour, price_scope: per_gpu}\n"
    path = tmp_path / "q.yaml"
    path.write_text(text, encoding="utf-8")
    out, accepted, q = stage(path, tmp_path / "work", fmt="quote-yaml")
    assert (out.rows_in, accepted.height) == (2, 1)
    assert q.select("row_number", "reason_code").rows() == [(11, "AMBIGUOUS_YAML_SCALAR")]
    assert set(accepted["billing_model"]) == {"on_demand"}
    assert pl.Series(q["detail"]).str.contains("line 11: price '1:30' reads as 90").all()
