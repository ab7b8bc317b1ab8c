"""One vocabulary of allowed values: the contracts, the adapters' alias tables and the SQL's tests agree."""
from pathlib import Path

import pytest
import yaml

from flows.ingest.adapters import quote_columns, run_csv
from models import vocabulary as v
from models.benchmarks import BenchmarkRun
from models.offers import QuoteObservation
from models.workloads import Workload

SCHEMA = Path(__file__).resolve().parents[2] / "sql" / "models" / "marts" / "schema.yml"


def _accepted_values() -> dict[tuple[str, str], list]:
    """(table, column) → the values of its accepted_values test in the marts' schema.yml."""
    out = {}
    for model in yaml.safe_load(SCHEMA.read_text(encoding="utf-8"))["models"]:
        for column in model.get("columns") or []:
            for test in column.get("data_tests") or column.get("tests") or []:
                if isinstance(test, dict) and "accepted_values" in test:
                    spec = test["accepted_values"]
                    out[(model["name"], column["name"])] = (spec.get("arguments") or spec)["values"]
    return out


@pytest.mark.parametrize("table, column, vocabulary", [
    ("offers", "billing_model", v.BILLING_MODELS), ("offers", "price_unit", v.TIME_UNITS),
    ("offers", "price_scope", v.PRICE_SCOPES), ("offers", "observed_at_basis", v.OBSERVED_AT_BASES),
    ("offers", "quote_status", v.QUOTE_STATUSES), ("benchmark_runs", "unit", v.WORK_UNITS),
])
def test_the_sql_accepts_exactly_the_vocabulary(table, column, vocabulary):
    assert _accepted_values()[(table, column)] == list(vocabulary)


def _isin(model, column) -> set:
    """The values a pandera column's isin check allows."""
    [check] = [c for c in model.to_schema().columns[column].checks if c.name == "isin"]
    return set(check.statistics["allowed_values"])


@pytest.mark.parametrize("model, column, vocabulary", [
    (QuoteObservation, "billing_model", v.BILLING_MODELS), (QuoteObservation, "price_unit", v.TIME_UNITS),
    (QuoteObservation, "billing_granularity", v.TIME_UNITS), (QuoteObservation, "price_scope", v.PRICE_SCOPES),
    (QuoteObservation, "tier", v.TIERS), (QuoteObservation, "quote_status", v.QUOTE_STATUSES),
    (QuoteObservation, "observed_at_basis", v.OBSERVED_AT_BASES),
    (QuoteObservation, "virtualisation", v.VIRTUALISATIONS),
    (BenchmarkRun, "unit", v.WORK_UNITS), (Workload, "unit", v.WORK_UNITS), (Workload, "scenario", v.SCENARIOS),
])
def test_the_contracts_allow_exactly_the_vocabulary(model, column, vocabulary):
    assert _isin(model, column) == set(vocabulary)


@pytest.mark.parametrize("aliases, vocabulary", [
    (quote_columns.TIME_UNITS, v.TIME_UNITS), (quote_columns.SCOPES, v.PRICE_SCOPES),
    (quote_columns.BILLING_MODELS, v.BILLING_MODELS), (quote_columns.TIERS, v.TIERS),
    (quote_columns.QUOTE_STATUSES, v.QUOTE_STATUSES), (quote_columns.VIRTUALISATION, v.VIRTUALISATIONS),
    (run_csv.UNITS, v.WORK_UNITS),
])
def test_the_adapters_map_every_spelling_onto_the_vocabulary_and_accept_each_value(aliases, vocabulary):
    assert set(aliases.values()) == set(vocabulary)
    assert all(aliases[value] == value for value in vocabulary)


def test_every_latency_statistic_has_its_column_and_every_slo_key_names_one():
    from flows.ingest.adapters.run_record import LATENCY_COLUMNS
    from flows.ingest.workloads import SCENARIOS, SLO_KEYS
    columns = set(BenchmarkRun.to_schema().columns)
    assert {f"{m}_{s}_ms" for m in v.LATENCY_METRICS for s in v.LATENCY_STATS} == set(LATENCY_COLUMNS) <= columns
    assert {c for c in columns if c.endswith("_ms") and c.split("_")[0] in v.LATENCY_METRICS} == set(LATENCY_COLUMNS)
    assert SLO_KEYS == {c for c in LATENCY_COLUMNS if "_std_" not in c} and SCENARIOS == set(v.SCENARIOS)
