"""The report's AMD vs NVIDIA baseline (from the warehouse only) and its non-overlapping chart labels."""
import pandas as pd

from provider_eval.report import _vendor_baseline, _vendor_summary, chart_labels
from tests.sql_chain import build, offer, run, workload


def baseline_con():
    # "both": MI300X 1 job at 0.25 job/h → 4 h × $4 = $16; H200 at 0.5 job/h → 2 h × $10 = $20.
    # "amd-only": the same MI300X run; no NVIDIA run, so the H200 offer is NO_BENCHMARK.
    return build(workloads=[workload("both"), workload("amd-only")],
                 offers=[offer("mi300x", "MI300X", "4"), offer("h200", "H200", "10")],
                 runs=[run("both", "MI300X", 0.25), run("both", "H200", 0.5), run("amd-only", "MI300X", 0.25)])


def test_baseline_compares_the_cheapest_measured_of_each_vendor():
    con = baseline_con()
    section = _vendor_baseline(con, "both", "cost_per_unit_usd", "$ per job")
    # 16 / 20 = 0.80.
    assert "costs 0.80 × the cheapest NVIDIA one ($ per job: 16.0000 against 20.0000)" in section
    assert "both" in _vendor_summary(con) and "amd-only" not in _vendor_summary(con).split("for:")[1]


def test_baseline_says_why_a_vendor_is_missing():
    con = baseline_con()
    section = _vendor_baseline(con, "amd-only", "cost_per_unit_usd", "$ per job")
    assert "ranks no measured NVIDIA configuration" in section
    # The H200 offer is costed and excluded (NO_BENCHMARK, listed under Excluded configurations).
    assert "<td>NVIDIA</td><td class=\"num\">0</td><td></td><td></td><td class=\"num\">1</td>" in section


def test_no_workload_with_both_vendors_is_said():
    con = build(workloads=[workload("w")], offers=[offer("mi300x", "MI300X", "4")], runs=[run("w", "MI300X", 0.25)])
    assert 'id="vendor-none"' in _vendor_summary(con)


def test_labels_of_points_at_one_spot_merge_and_overlapping_ones_are_left_out():
    points = pd.DataFrame({
        "configuration": ["a", "b", "c", "far", "near"],
        # a, b, c share a point; "near" is 1 % of the x span right of it (its label box would cross a's).
        "x_value": [10.0, 10.0, 10.0, 110.0, 11.0],
        "cost_per_unit_usd": [1.0, 1.0, 1.0, 5.0, 1.0],
    })
    labels, left_out = chart_labels(points, "cost_per_unit_usd")
    assert labels == ["a (+2 more here) (+1 nearby)", "", "", "far", ""]
    assert left_out == 1  # "near": its box starts 5.6 px + 7 px right of a's point, inside a's 105 px label
