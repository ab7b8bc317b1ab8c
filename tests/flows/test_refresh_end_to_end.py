"""The refresh flow end to end on the bundled sample data: seed 000's worked example, tables, counts."""
import json
import subprocess
import sys
from decimal import Decimal

from provider_eval import progress
from provider_eval.paths import SQL_DIR
from provider_eval.sql_compiled import compiled_models
from tests.conftest import query, run_refresh

SPEC_COLUMNS = {
    "offers": {"offer_id", "provider", "gpu_model", "gpus_per_node", "billing_model", "usd_per_gpu_hour",
               "usd_per_node_hour", "observed_at", "source_name", "is_stale"},
    "offer_history": {"offer_id", "provider", "gpu_model", "usd_per_gpu_hour", "observed_at", "source_name"},
    "benchmark_runs": {"run_id", "gpu_model", "gpu_count", "model_id", "precision", "engine", "completed",
                       "failed", "duration_s", "output_tokens_per_s", "source_name"},
    "benchmark_requests": {"run_id"},
    "memory_fit": {"workload_id", "gpu_model", "gpu_count", "required_bytes_per_gpu", "available_bytes_per_gpu",
                   "fits", "min_gpus"},
    "compat_checks": {"gpu_model", "rocm_version", "os", "verdict", "reasons"},
    "workload_costs": {"workload_id", "offer_id", "provider", "gpu_model", "gpu_count", "billing_model",
                       "hours_needed", "hours_billed", "total_cost_usd", "cost_per_unit_usd", "status",
                       "exclusion_reasons"},
    "rankings": {"workload_id", "rank", "offer_id", "provider", "gpu_model", "gpu_count", "billing_model",
                 "cost_per_unit_usd", "total_cost_usd", "hours_billed"},
    "hardware_validations": {"validation_id", "host", "offer_id", "verdict", "reasons", "validated_at"},
    "quarantine": {"source_name", "file", "row_number", "reason_code", "detail"},
    "ingest_manifest": {"file_sha256", "source_name", "format", "status", "reason", "rows_in", "rows_accepted",
                        "rows_quarantined"},
}


def test_seed_000_worked_example_is_reproduced_exactly(sample_warehouse):
    rows = query(sample_warehouse, """
        select rank, gpu_model, usd_per_node_hour, hours_billed, total_cost_usd, cost_per_unit_usd
        from rankings where workload_id = 'seed-000-same-task' order by rank""")
    assert [(r[0], r[1]) for r in rows] == [(1, "MI350X"), (2, "MI325X"), (3, "MI300X")]
    assert [(r[2], r[3], r[4]) for r in rows] == [
        (Decimal("4.00"), Decimal("4"), Decimal("16.00")),
        (Decimal("2.75"), Decimal("7"), Decimal("19.25")),
        (Decimal("2.00"), Decimal("10"), Decimal("20.00")),
    ]
    # One job completed: cost per completed workload equals the total.
    assert [r[5] for r in rows] == [r[4] for r in rows]


def test_cheapest_hourly_rate_is_not_what_wins(sample_warehouse):
    cheapest_rate, winner = query(sample_warehouse, """
        select (select gpu_model from rankings where workload_id = 'seed-000-same-task'
                order by usd_per_gpu_hour limit 1),
               (select gpu_model from rankings where workload_id = 'seed-000-same-task' and rank = 1)""")[0]
    assert (cheapest_rate, winner) == ("MI300X", "MI350X")


def test_configurations_without_evidence_stay_visible_with_a_reason(sample_warehouse):
    excluded = query(sample_warehouse, """
        select provider, gpu_count, exclusion_reasons from workload_costs
        where workload_id = 'seed-000-same-task' and status = 'excluded'""")
    assert excluded, "real price points have no benchmark for the seed task and must be listed as excluded"
    # Every one lacks a benchmark (a market outlier like Oracle's $6.00 is a warning, not a reason).
    # The undated real catalogs (RunPod, Hot Aisle, Vast.ai's NVIDIA offers) were also QUOTE_AGE_UNKNOWN
    # under the 730-day limit (issue 16) until the NVIDIA baseline was ranked (issue 22): their sources
    # have max_quote_age_days: null, one rule for both vendors, and they are flagged undated where ranked.
    assert all(reasons == ["NO_BENCHMARK"] for _, _, reasons in excluded)
    assert {p for p, _, _ in excluded} >= {"vast.ai", "runpod"}
    # Requests for quotation (no price yet) are in offers, pending, and not costed.
    pending = query(sample_warehouse, "select distinct provider from offers where pending_reason = 'QUOTE_PENDING'")
    assert {p for (p,) in pending} == {"cherry-servers", "vast.ai", "servermania"}
    requested = {o for (o,) in query(sample_warehouse, "select offer_id from offers where pending_reason is not null")}
    costed = {o for (o,) in query(sample_warehouse, "select offer_id from workload_costs")}
    assert requested and not requested & costed
    ranked_ids = {r[0] for r in query(sample_warehouse, "select offer_id from rankings "
                                                        "where workload_id = 'seed-000-same-task'")}
    assert ranked_ids == {"seed-000-mi300x-server", "seed-000-mi325x-server", "seed-000-mi350x-server"}


def test_public_tables_have_the_spec_columns(sample_warehouse):
    for table, expected in SPEC_COLUMNS.items():
        columns = {r[0] for r in query(sample_warehouse, f'describe "{table}"')}
        assert expected <= columns, f"{table} lacks {sorted(expected - columns)}"


def test_money_is_decimal_and_times_are_utc(sample_warehouse):
    types = dict(query(sample_warehouse, """
        select column_name, data_type from information_schema.columns
        where table_name = 'workload_costs'"""))
    for column in ("usd_per_gpu_hour", "total_cost_usd", "cost_per_unit_usd", "compute_cost_usd"):
        assert types[column].startswith("DECIMAL"), (column, types[column])
    assert types["observed_at"] == "TIMESTAMP WITH TIME ZONE"


def test_every_input_row_is_accounted_for(sample_warehouse):
    manifest = query(sample_warehouse, """
        select sum(rows_in), sum(rows_accepted), sum(rows_quarantined) from ingest_manifest""")[0]
    accepted = query(sample_warehouse, "select (select count(*) from offer_history) + (select count(*) from benchmark_runs)")[0][0]
    quarantined = query(sample_warehouse, "select count(*) from quarantine")[0][0]
    assert manifest == (accepted + quarantined, accepted, quarantined)
    # 3 seed quotes + 9 public price points + 3 quote-yaml options + 3 seed runs + 8 benchmark result
    # runs (MLPerf MI300X Offline/Server, MLPerf H200 Offline/Server — the NVIDIA baseline, issue 22 —,
    # MLPerf MI325X Offline/Server, InferenceX MI355X, vLLM A100 — quarantined) = 26, plus provider catalogs (docs/formats/catalogs.md): DigitalOcean 5,
    # Vultr 6 + 10, Hot Aisle 1, RunPod 1, gpuhunt/Crusoe 2, SkyPilot DigitalOcean 38 and Lambda 51
    # records = 114, plus 7 low-confidence public price points and 7 requested billing options
    # (requests for quotation to Cherry Servers, Vast.ai and ServerMania) = 14, plus the SkyPilot
    # Vast.ai catalog's 67 records (NVIDIA baseline, issue 22: 8 H200/B200 accepted).
    assert manifest[0] == 26 + 114 + 14 + 67


def test_rerunning_on_the_same_inputs_changes_nothing(tmp_path):
    warehouse = tmp_path / "w.duckdb"
    snapshot_sql = """
        select 'rankings', md5(string_agg(concat_ws('|', workload_id, rank, offer_id, total_cost_usd), ',' order by workload_id, rank)) from rankings
        union all select 'offers', md5(string_agg(concat_ws('|', source_name, offer_id, billing_model, tier, commitment_term_hours, usd_per_gpu_hour, observed_at), ',' order by source_name, offer_id, billing_model, tier, commitment_term_hours)) from offers
        union all select 'offer_history', count(*)::varchar from offer_history
        union all select 'manifest', md5(string_agg(concat_ws('|', file_sha256, status, rows_in), ',' order by file_sha256)) from ingest_manifest"""
    first_events = []
    stop = progress.listen(lambda *event: first_events.append(event))
    try:
        assert run_refresh(warehouse).is_completed()
    finally:
        stop()
    first = query(warehouse, snapshot_sql)
    events = []
    stop = progress.listen(lambda *event: events.append(event))
    try:
        assert run_refresh(warehouse).is_completed()
    finally:
        stop()
    # The CLI's progress bar sees every stage, in order, and the fan-out's count.
    stages = list(dict.fromkeys(name for name, _, _ in events))
    assert stages == ["fetch + land", "parse + validate", "load + SQL models + checks", "quality gate", "publish"]
    parsed = [(done, total) for name, done, total in events if name == "parse + validate"]
    assert parsed[-1][0] == parsed[-1][1] > 0
    # dbt reports each model and check as it finishes: one count per node. The first (full) build
    # runs every model; the rerun only what the refresh's clock reaches (nothing else changed).
    def built_counts(seen):
        return [done for name, done, _ in seen if name == "load + SQL models + checks" and done]
    full, built = built_counts(first_events), built_counts(events)
    assert full == list(range(1, len(full) + 1)) and len(full) > len(compiled_models(SQL_DIR))
    assert built == list(range(1, len(built) + 1)) and 0 < len(built) < len(full)
    assert query(warehouse, snapshot_sql) == first
    # Landed once: the content-addressed store holds one copy per file.
    # (4 bundled CSV quote/run files + 3 catalog CSVs; catalogs also land JSON bodies.)
    assert len(list((tmp_path / "landing").rglob("*.csv"))) == 8  # + SkyPilot Vast.ai (issue 22)


def test_rank_cli_shows_all_three_with_cost_per_completed_workload(sample_warehouse):
    out = subprocess.run(
        [sys.executable, "-m", "provider_eval", "rank", "--warehouse", str(sample_warehouse),
         "--workload", "seed-000-same-task", "--format", "json"],
        capture_output=True, text=True, check=True,
    )
    ranked = json.loads(out.stdout)
    assert [(r["rank"], r["gpu_model"], r["cost_per_unit_usd"]) for r in ranked] == [
        (1, "MI350X", 16.0), (2, "MI325X", 19.25), (3, "MI300X", 20.0)]
    table = subprocess.run(
        [sys.executable, "-m", "provider_eval", "rank", "--warehouse", str(sample_warehouse)],
        capture_output=True, text=True, check=True,
    )
    for text in ("MI350X", "16.00", "MI325X", "19.25", "MI300X", "20.00"):
        assert text in table.stdout
    # The excluded summary is part of the answer: on stdout with the table (issue 22).
    assert "configurations excluded; reasons (a configuration may have several)" in table.stdout
