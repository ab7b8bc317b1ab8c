"""Requests for quotation, seed 000's procurement checklist, price outliers, unusual GPU counts and
ambiguous GPU names — through the real refresh flow (one refresh for the module)."""
import datetime as dt
import json

import polars as pl
import pytest

from flows.ingest.land import land_file
from flows.ingest.stage import stage_file
from flows.probe.evidence import EVIDENCE_SCHEMA
from models.offers import QuoteObservation
from tests.benchmark_files import small_vllm_result
from tests.conftest import FIXTURES, query, run_refresh, write_sources

PROCUREMENT = FIXTURES / "quotes" / "procurement"
NOW = dt.datetime(2026, 11, 29, 12, 0, tzinfo=dt.timezone.utc)
CHECKS = ["check_accelerator", "check_memory_virtualisation", "check_rocm", "check_software_stack",
          "check_topology", "check_cpu_ram", "check_nvme", "check_network", "check_total_cost", "check_benchmark"]


def validation_record(validation_id: str, offer_id: str, provider: str, verdict: str, gemm) -> dict:
    """An evidence record as validate-host writes it (the fields the refresh reads)."""
    return {"schema_version": EVIDENCE_SCHEMA, "validation_id": validation_id, "host": "203.0.113.10", "port": 22,
            "user": "ops", "offer_id": offer_id, "provider": provider, "verdict": verdict,
            "reasons": [f"{verdict.upper()} gpu_model: MI300X"], "validated_at": "2026-11-21T10:00:00+00:00",
            "quoted_gpu_model": "MI300X", "quoted_gpu_count": 8, "findings": [],
            "measured": {"gpu_models": ["MI300X"], "gpu_count": 8, "logical_device_count": 8,
                         "vram_bytes_per_gpu_min": 206141652992, "rocm_version": "6.4.1",
                         "partition_modes": ["SPX", "NPS1"], "gemm_bf16_8192_tflops": gemm}}


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory):
    root = tmp_path_factory.mktemp("procurement")
    wh = root / "wh" / "provider_eval.duckdb"
    validations = wh.parent / "validations"
    (validations / "benchmarks" / "vllm-serve").mkdir(parents=True)
    for record in (validation_record("val-00000000000000a1", "full-mi300x-8", "full-host", "pass", 700.0),
                   validation_record("val-00000000000000b2", "failed-mi300x-8", "failed-host", "fail", None)):
        (validations / f"{record['validation_id']}.json").write_text(json.dumps(record), encoding="utf-8")
    # validate-host --workload's result for the full host's configuration (its --metadata tags).
    result = small_vllm_result(provider="full-host", gpu_model="MI300X", gpu_count=8, model_id="llama-2-70b")
    (validations / "benchmarks" / "vllm-serve" / "val-00000000000000a1.json").write_text(json.dumps(result))
    sources = write_sources(root, [
        # A drop folder: the requests, and later the vendor's answer to one of them.
        {"name": "procurement", "kind": "quotes", "format": "quote-yaml", "path": str(PROCUREMENT / "*.yaml")},
        {"name": "market", "kind": "quotes", "format": "quote-csv", "path": str(PROCUREMENT / "market.csv")},
        {"name": "runs", "kind": "benchmarks", "format": "run-csv", "path": str(PROCUREMENT / "runs_mi300x8.csv")},
    ])
    state = run_refresh(wh, sources)
    assert state.is_completed(), state.message
    return wh


def offers(wh, where: str) -> list[dict]:
    rows = query(wh, f"select * from offers where {where} order by offer_id, billing_model")
    columns = [r[0] for r in query(wh, "describe offers")]
    return [dict(zip(columns, r)) for r in rows]


def test_requests_for_quotation_sit_beside_priced_offers(warehouse):
    pending = offers(warehouse, "provider = 'pending-host'")
    assert [(o["billing_model"], o["commitment_term_hours"], o["min_term_hours"]) for o in pending] == [
        ("dedicated", None, 2190), ("reserved", 8760, 0)]
    for o in pending:
        assert (o["quote_status"], o["pending_reason"], o["requested_on"]) == ("requested", "QUOTE_PENDING", dt.date(2026, 11, 1))
        assert o["usd_per_gpu_hour"] is None and o["usd_per_node_hour"] is None and o["price_amount"] is None
        assert o["is_stale"] is False and o["scope_reason"] is None
    # Not a quarantine error, and every row is accounted for.
    assert sorted(query(warehouse, "select rows_in, rows_accepted, rows_quarantined from ingest_manifest "
                                   "where source_name = 'procurement'")) == [(1, 1, 0), (6, 6, 0)]
    assert query(warehouse, "select count(*) from quarantine where source_name = 'procurement'") == [(0,)]


def test_a_request_is_never_costed_or_ranked(warehouse):
    # No price, nothing to cost: no workload_costs row (so no FX_RATE_MISSING either), never ranked.
    assert query(warehouse, "select count(*) from workload_costs where provider = 'pending-host'") == [(0,)]
    assert query(warehouse, "select count(*) from rankings where provider = 'pending-host'") == [(0,)]
    assert query(warehouse, "select count(*) from workload_costs where provider = 'stated-host'") != [(0,)]


def test_the_answer_replaces_the_request_and_history_keeps_both(warehouse):
    (now,) = offers(warehouse, "offer_id = 'answered-mi300x-1'")
    assert (now["quote_status"], float(now["usd_per_gpu_hour"]), now["pending_reason"]) == ("quoted", 2.2, None)
    history = query(warehouse, "select quote_status, usd_per_gpu_hour, requested_on from offer_history "
                               "where offer_id = 'answered-mi300x-1' order by observed_at")
    assert [(s, None if p is None else float(p), d) for s, p, d in history] == [
        ("requested", None, dt.date(2026, 10, 1)), ("quoted", 2.2, dt.date(2026, 10, 1))]


def test_checklist_verified_known_and_missing(warehouse):
    def checklist(offer_id):
        (o,) = offers(warehouse, f"offer_id = '{offer_id}'")
        return {c.removeprefix("check_"): o[c] for c in CHECKS}, o["checklist_missing"]

    full, missing = checklist("full-mi300x-8")
    # The probe measured it (a passed validation): identity, memory, ROCm, PyTorch, links, and its benchmark.
    assert full == {"accelerator": "verified", "memory_virtualisation": "verified", "rocm": "verified",
                    "software_stack": "verified", "topology": "verified", "cpu_ram": "known", "nvme": "known",
                    "network": "known", "total_cost": "known", "benchmark": "verified"}
    assert missing == []
    stated, missing = checklist("stated-mi300x-8")
    assert stated == {"accelerator": "known", "memory_virtualisation": "known", "rocm": "known",
                      "software_stack": "known", "topology": "known", "cpu_ram": "known", "nvme": "missing",
                      "network": "missing", "total_cost": "missing", "benchmark": "known"}
    assert missing == ["nvme", "network", "total_cost"]
    # A failed validation verifies nothing.
    failed, missing = checklist("failed-mi300x-8")
    assert failed["accelerator"] == "known" and failed["rocm"] == "known"
    assert missing == ["memory_virtualisation", "software_stack", "topology", "cpu_ram", "nvme", "network",
                       "total_cost", "benchmark"]
    # A request: what it asks for is known, the price (so the total cost) is not.
    for o in offers(warehouse, "offer_id = 'pending-mi350x-8'"):
        assert o["check_accelerator"] == "known" and o["check_total_cost"] == "missing"
        assert o["check_benchmark"] == "missing"


def test_server_facts_are_stored_in_canonical_units(warehouse):
    (o,) = offers(warehouse, "offer_id = 'full-mi300x-8'")
    assert (o["cpu_model"], o["cpu_cores"], o["system_ram_bytes"], o["nvme_bytes"]) == (
        "2x AMD EPYC 9374F", 64, 2048 * 10**9, 30720 * 10**9)
    assert (o["interconnect"], float(o["network_gbps"]), o["virtualisation"], o["software_tested"]) == (
        "Infinity Fabric, 8 GPUs fully connected", 400.0, "bare_metal", "PyTorch 2.6, vLLM 0.9.1")


def test_price_outliers_are_flagged_with_their_numbers(warehouse):
    flagged = {o["offer_id"]: o["scope_detail"] for o in offers(warehouse, "source_name = 'market' and is_scope_suspect")}
    assert set(flagged) == {"p7-mi325x-8", "p8-mi325x-8"}
    assert flagged["p7-mi325x-8"] == ("per_gpu price 16.4 $/GPU-h is about 7.9 × the median (2.075) of 12 other "
                                      "MI325X on_demand prices (8 GPUs per node)")
    assert "0.26 $/GPU-h is about 0.12 × the median" in flagged["p8-mi325x-8"]
    # Excluded from ranking with the existing reason; the dearer-but-ordinary p6 (3.45) is not flagged.
    reasons = query(warehouse, "select distinct offer_id, list_contains(exclusion_reasons, 'SCOPE_SUSPECT') "
                               "from workload_costs where source_name = 'market' and offer_id in ('p6-mi325x', 'p7-mi325x-8')")
    assert sorted(reasons) == [("p6-mi325x", False), ("p7-mi325x-8", True)]


def test_a_dear_price_that_is_no_scope_slip_is_a_warning_not_an_exclusion(warehouse):
    """6.00 $/GPU-h is > 3σ from the market but ≈ 2.9 × its median, not 8 ×: it may be a real list price."""
    (o,) = offers(warehouse, "offer_id = 'p14-mi325x'")
    assert (o["is_scope_suspect"], o["warnings"]) == (False, ["PRICE_OUTLIER"])
    assert "6.0 $/GPU-h is" in o["scope_detail"] and "robust σ (log price, 1.4826 × MAD) from 12 other MI325X on_demand prices (median 2.075)" in o["scope_detail"]
    rows = query(warehouse, "select distinct exclusion_reasons, risk_notes from workload_costs where offer_id = 'p14-mi325x'")
    assert rows and all("SCOPE_SUSPECT" not in reasons for reasons, _ in rows)
    assert all(any(n.startswith("PRICE_OUTLIER: 6.0 $/GPU-h") for n in notes) for _, notes in rows)


def test_unusual_gpu_counts_warn_without_excluding(warehouse):
    warned = {o["offer_id"]: o["warnings"] for o in offers(warehouse, "len(warnings) > 0")}
    assert warned == {"p9-mi325x-6": ["GPU_COUNT_UNUSUAL"], "p14-mi325x": ["PRICE_OUTLIER"]}
    assert query(warehouse, "select distinct list_contains(exclusion_reasons, 'GPU_COUNT_UNUSUAL') from workload_costs "
                            "where offer_id = 'p9-mi325x-6'") == [(False,)]


def test_bare_family_names_are_quarantined_as_variant_unknown(warehouse):
    rows = query(warehouse, "select row_number, reason_code, detail from quarantine where source_name = 'market' "
                            "order by row_number")
    assert rows == [
        (15, "GPU_VARIANT_UNKNOWN",
         "GPU_VARIANT_UNKNOWN: gpu_model 'H100' names several variants (H100 SXM | H100 PCIe | H100 NVL): state which one"),
        (16, "GPU_VARIANT_UNKNOWN",
         "GPU_VARIANT_UNKNOWN: gpu_model 'AMD Instinct MI300' names several variants (MI300X | MI300A): state which one"),
    ]


@pytest.mark.parametrize("cells,code", [
    ({"quote_status": "requested", "requested_on": "2026-11-01"}, "QUOTE_STATUS_CONFLICT"),  # with a price
    ({"quote_status": "requested", "price": ""}, "FIELD_MISSING"),  # no requested_on
    ({"quote_status": "requested", "price": "", "requested_on": "01/11/2026"}, "DATE_INVALID"),
    ({"quote_status": "maybe"}, "QUOTE_STATUS_UNKNOWN"),
    ({"quote_status": "requested", "price": "", "requested_on": "2026-11-01", "currency": "JPY"}, "CURRENCY_UNKNOWN"),
    ({"cpu_cores": "64 cores"}, "SPEC_INVALID"),
    ({"virtualisation": "vm"}, "SPEC_INVALID"),
    ({"system_ram_gb": "2TB"}, "SPEC_NOT_NUMERIC"),
    ({"nvme_gb": "0"}, "SPEC_PLACEHOLDER"),
    ({"network_gbps": "-100"}, "SPEC_NONPOSITIVE"),
    ({"network_gbps": "NaN"}, "SPEC_NONFINITE"),
    ({"nvme_gb": "10000000000"}, "SPEC_OUT_OF_RANGE"),  # 10^19 bytes would not fit the bytes column
])
def test_bad_request_and_server_cells_are_quarantined(tmp_path, cells, code):
    row = {"provider": "acme", "offer_id": "x", "gpu_model": "MI300X", "gpus_per_node": "8", "price": "2.49",
           "currency": "USD", "price_unit": "hour", "price_scope": "per_gpu", "billing_model": "on_demand", **cells}
    path = tmp_path / "one.csv"
    path.write_text(",".join(row) + "\n" + ",".join(row.values()) + "\n", encoding="utf-8")
    out = stage_file(land_file("t", path, tmp_path / "landing", NOW), "quote-csv", {}, tmp_path / "staged")
    q = pl.read_parquet(out.quarantine_parquet)
    assert (out.rows_in, out.rows_accepted, q["reason_code"].to_list()) == (1, 0, [code]), q.to_dicts()


def test_the_contract_holds_quoted_rows_to_a_price(tmp_path):
    """Belt and braces: a quoted row without a price cannot pass the pandera contract either."""
    path = tmp_path / "ok.csv"
    path.write_text("provider,offer_id,gpu_model,gpus_per_node,price,currency,price_unit,price_scope,billing_model\n"
                    "acme,x,MI300X,1,2.49,USD,hour,per_gpu,on_demand\n", encoding="utf-8")
    out = stage_file(land_file("t", path, tmp_path / "landing", NOW), "quote-csv", {}, tmp_path / "staged")
    frame = pl.read_parquet(out.accepted_parquet)
    QuoteObservation.validate(frame)
    broken = frame.with_columns(pl.lit(None, frame.schema["price_amount"]).alias("price_amount"))
    with pytest.raises(Exception, match="quoted_rows_have_a_price"):
        QuoteObservation.validate(broken)


@pytest.mark.parametrize("doc,fence,fmt", [("quote-yaml.md", "yaml", "quote-yaml"), ("quote-csv.md", "csv", "quote-csv")])
def test_every_documented_example_loads_without_quarantine(tmp_path, doc, fence, fmt):
    """The request-for-quotation and server-facts examples in docs/formats/ are real, loadable files."""
    from provider_eval.paths import PROJECT_ROOT

    text = (PROJECT_ROOT / "docs" / "formats" / doc).read_text(encoding="utf-8")
    examples = [b.split("```", 1)[0] for b in text.split(f"```{fence}\n")[1:]]
    # Every full example (the shape sketch with '…' placeholders is not one).
    examples = [e for e in examples if e.lstrip().startswith(("quotes:", "provider,")) and "…" not in e]
    assert len(examples) >= 2
    for i, example in enumerate(examples):
        path = tmp_path / f"example{i}.{fence}"
        path.write_text(example, encoding="utf-8")
        out = stage_file(land_file("docs", path, tmp_path / "landing", NOW), fmt, {}, tmp_path / "staged")
        assert out.status == "loaded" and out.rows_quarantined == 0, (i, out.reason,
                                                                      pl.read_parquet(out.quarantine_parquet).to_dicts())
