"""Issue 22 on hand-built inputs: NVIDIA offers are ranked by the same rules (ROCm does not apply to
them), and every costed row carries its vendor, quote age and risk flags, computed in SQL."""
from decimal import Decimal

from tests.sql_chain import build, offer, rows, run, workload

# A stack the ROCm check calls unsupported, as compat_checks would answer it for both GPUs.
UNSUPPORTED = [{"gpu_model": g, "rocm_version": "6.0", "os": "Ubuntu 22.04", "kernel": None,
                "amdgpu_driver_version": None, "torch_version": None, "engine": None, "verdict": "unsupported",
                "reasons": [f"{g}: not supported by ROCm 6.0"]} for g in ("MI300X", "H200")]


def costs(con):
    return {r["offer_id"]: r for r in rows(con, "select * from workload_costs order by offer_id")}


def test_an_nvidia_offer_is_ranked_by_the_same_rules_and_never_rocm_unsupported():
    stack = {"rocm_version": "6.0", "os": "Ubuntu 22.04"}
    con = build(workloads=[workload("w")],
                offers=[offer("amd", "MI300X", price="2.00", **stack), offer("nv", "H200", price="3.00", **stack)],
                runs=[run("w", "MI300X", 0.5), run("w", "H200", 1.0)], compat=UNSUPPORTED)
    got = costs(con)
    assert got["amd"]["vendor"] == "AMD" and got["amd"]["status"] == "excluded"
    assert got["amd"]["exclusion_reasons"] == ["ROCM_UNSUPPORTED"] and got["amd"]["compat_verdict"] == "unsupported"
    nv = got["nv"]
    assert nv["vendor"] == "NVIDIA" and nv["compat_verdict"] == "not_applicable" and nv["status"] == "ranked"
    assert nv["compat_reasons"] == ["H200 is an NVIDIA GPU: the ROCm compatibility check does not apply"]
    # 1 job at 1 job/h = 1 h × $3.00 (the same arithmetic as for AMD).
    assert nv["total_cost_usd"] == Decimal("3.00")
    ranked = rows(con, "select offer_id, rank, vendor from rankings")
    assert ranked == [{"offer_id": "nv", "rank": 1, "vendor": "NVIDIA"}]


def test_risk_flags_quote_age_and_warnings_are_computed_per_row():
    # The harness refresh runs 2026-11-15; the offers were observed 2026-11-01 (14 days) unless stated.
    con = build(workloads=[workload("w")],
                offers=[offer("spot", price="1.00", billing_model="spot"),
                        offer("dear", price="9.00", warnings=["PRICE_OUTLIER"], scope_detail="9 $/GPU-h is far"),
                        offer("undated", price="2.00", observed_at_basis="landed_at", warnings=["OBSERVED_AT_UNKNOWN"]),
                        offer("checked", price="2.00", observed_at="2025-11-15 00:00:00+00")],
                runs=[run("w", "MI300X", 0.5)],
                validations=[{"offer_id": "checked", "validation_id": "v1", "verdict": "pass"},
                             {"offer_id": "dear", "validation_id": "v2", "verdict": "inconclusive"}])
    got = costs(con)
    assert got["spot"]["risk_flags"] == ["spot", "14d old", "unvalidated"] and got["spot"]["quote_age_days"] == 14
    assert got["dear"]["risk_flags"] == ["price outlier", "14d old", "validation inconclusive"]
    assert got["dear"]["warnings"] == ["PRICE_OUTLIER"]
    assert got["undated"]["quote_age_days"] is None and got["undated"]["risk_flags"] == ["undated", "unvalidated"]
    # 2025-11-15 to 2026-11-15: 365 days; a passing validation raises no flag.
    assert got["checked"]["quote_age_days"] == 365 and got["checked"]["risk_flags"] == ["365d old"]
    ranked = {r["offer_id"]: r for r in rows(con, "select * from rankings")}
    assert ranked["spot"]["risk_flags"] == got["spot"]["risk_flags"]
    assert ranked["dear"]["risk_notes"] == got["dear"]["risk_notes"] and ranked["dear"]["warnings"] == ["PRICE_OUTLIER"]
