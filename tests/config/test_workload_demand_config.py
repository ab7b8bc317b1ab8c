"""workloads.yaml: deadline_hours, sustained and spot_interruptions are read, or refused naming line and key."""
from decimal import Decimal

import pytest

from flows.ingest.workloads import load_workloads
from provider_eval.errors import ConfigError

HEAD = "workloads:\n  - id: a\n    kind: inference\n    unit: output_tokens\n"


def _load(tmp_path, body):
    path = tmp_path / "workloads.yaml"
    path.write_text(HEAD + body, encoding="utf-8")
    return load_workloads(path).to_dicts()[0]


def test_fixed_and_deadline_and_sustained_rows(tmp_path):
    assert _load(tmp_path, "    quantity: 5\n")["demand_kind"] == "fixed"
    row = _load(tmp_path, "    quantity: 100\n    deadline_hours: 30\n")
    assert (row["demand_kind"], row["deadline_hours"]) == ("deadline", Decimal("30"))
    row = _load(tmp_path, "    sustained: {units_per_month: 2000000000, months: 6, peak_units_per_hour: 5000000}\n")
    # quantity = 2e9 a month × 6 months.
    assert (row["demand_kind"], row["quantity"], row["period_months"], row["peak_units_per_hour"]) == (
        "sustained", Decimal("12000000000"), 6, Decimal("5000000"))
    row = _load(tmp_path, "    quantity: 1\n    spot_interruptions:\n      - {provider: vultr, interruptions_per_hour: 0.1,"
                          " lost_hours_per_interruption: 0.5, source: my log}\n")
    assert '"provider": "vultr"' in row["spot_interruptions_json"] and '"source": "my log"' in row["spot_interruptions_json"]


@pytest.mark.parametrize(("body", "message"), [
    ("    sustained: {units_per_month: 2}\n", "line 2: sustained.months must be a whole number of months > 0"),
    ("    quantity: 5\n    sustained: {units_per_month: 2, months: 2}\n",
     "line 2: quantity 5 is not sustained.units_per_month × months = 4; leave it out"),
    ("    quantity: 5\n    deadline_hours: 0\n", "line 2: deadline_hours 0 must be a positive number"),
    ("    sustained: {units_per_month: 2, months: 2}\n    deadline_hours: 3\n", "not both"),
    ("    sustained: {units_per_month: 2, months: 2, rate: 3}\n", "'sustained' may only hold"),
    ("    deadline_hours: 3\n", "line 2: 'quantity' is required"),
    ("    quantity: 1\n    spot_interruptions: [{provider: v, interruptions_per_hour: 0.1, lost_hours_per_interruption: 1}]\n",
     "'spot_interruptions.0.source' is required"),
    ("    quantity: 1\n    spot_interruptions: [{provider: v, interruptions_per_hour: 2, lost_hours_per_interruption: 0.5,"
     " source: s}]\n", "must be below 1"),
])
def test_bad_demand_fields_name_line_and_key(tmp_path, body, message):
    with pytest.raises(ConfigError, match="workloads.yaml") as exc:
        _load(tmp_path, body)
    assert message in str(exc.value)
