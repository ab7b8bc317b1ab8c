"""Deadline and sustained-demand workloads, spot assumptions: hand-worked answers (docs/workloads.md)."""
from decimal import Decimal

from tests.sql_chain import build, offer, rows, run, workload


def costs(con, workload_id):
    return {r["offer_id"]: r for r in rows(con, "select * from workload_costs where workload_id = ? "
                                                "order by offer_id", [workload_id])}


# Deadline: 100 jobs; MI300X measured at 1, 2 and 4 nodes of 8 GPUs (2, 5, 10 jobs/h), $16 per node-hour;
# MI325X measured on one node only (2.5 jobs/h), $20 per node-hour.
DEADLINE_OFFERS = [offer("mi300x", "MI300X", "16", gpus_per_node=8), offer("mi325x", "MI325X", "20", gpus_per_node=8)]
DEADLINE_RUNS = [run(w, "MI300X", rate, gpu_count=gpus) for w in ("dl", "tight", "slow", "fixed")
                 for rate, gpus in ((2.0, 8), (5.0, 16), (10.0, 32))] + [
    run(w, "MI325X", 2.5, gpu_count=8) for w in ("dl", "tight", "slow", "fixed")]


def deadline_con():
    return build(workloads=[workload("dl", quantity=100, deadline_hours=30, demand_kind="deadline"),
                            workload("tight", quantity=100, deadline_hours=8, demand_kind="deadline"),
                            workload("slow", quantity=100, deadline_hours=30, demand_kind="deadline",
                                     utilisation=Decimal("0.5")),
                            workload("fixed", quantity=100, demand_kind="fixed")],
                 offers=DEADLINE_OFFERS, runs=DEADLINE_RUNS)


def test_deadline_takes_the_fewest_measured_nodes_that_meet_it():
    con = deadline_con()
    dl = costs(con, "dl")
    # MI300X: 1 node 100 / 2 = 50 h > 30; 2 nodes 100 / 5 = 20 h ≤ 30 → 2 nodes, 20 h × 2 × $16 = $640.
    assert (dl["mi300x"]["node_count"], dl["mi300x"]["hours_billed"], dl["mi300x"]["total_cost_usd"],
            dl["mi300x"]["status"]) == (2, Decimal("20"), Decimal("640.00"), "ranked")
    # MI325X: measured on one node only: 100 / 2.5 = 40 h > 30, never extrapolated to 2 nodes.
    assert dl["mi325x"]["node_count"] == 1 and dl["mi325x"]["exclusion_reasons"] == ["DEADLINE_NOT_MET"]
    assert any(n.startswith("DEADLINE_NOT_MET: 40.0 h needed at the most nodes a run measured (1), deadline 30.0 h") for n in dl["mi325x"]["risk_notes"])
    # The same job without a deadline: one node, 50 h × $16 = $800 (the fixed kind is unchanged).
    fixed = costs(con, "fixed")
    assert (fixed["mi300x"]["node_count"], fixed["mi300x"]["total_cost_usd"]) == (1, Decimal("800.00"))
    assert fixed["mi325x"]["total_cost_usd"] == Decimal("800.00")  # 40 h × $20


def test_deadline_not_met_at_the_most_nodes_and_utilisation_counts():
    con = deadline_con()
    tight = costs(con, "tight")["mi300x"]
    # 4 nodes (the most a run measured): 100 / 10 = 10 h > 8 → excluded, shown at 4 nodes.
    assert (tight["node_count"], tight["hours_needed"], tight["exclusion_reasons"]) == (
        4, Decimal("10"), ["DEADLINE_NOT_MET"])
    slow = costs(con, "slow")["mi300x"]
    # At 50 % utilisation: 1 node 100 h, 2 nodes 40 h > 30, 4 nodes 100 / 10 / 0.5 = 20 h → 4 × 20 h × $16 = $1,280.
    assert (slow["node_count"], slow["hours_needed"], slow["total_cost_usd"]) == (4, Decimal("20"), Decimal("1280.00"))
    ranked = rows(con, "select workload_id, offer_id, node_count from rankings where workload_id = 'dl'")
    assert ranked == [{"workload_id": "dl", "offer_id": "mi300x", "node_count": 2}]


# Sustained: 2 billion output tokens a month for 6 months on 8 × MI300X measured at 1,000 tok/s = 3.6 M tok/h.
SUSTAINED = dict(kind="inference", unit="output_tokens", quantity=12 * 10**9, demand_kind="sustained",
                 units_per_month=2 * 10**9, period_months=6)
SUSTAINED_OFFERS = [
    offer("od", "MI300X", "16", gpus_per_node=8),
    offer("month", "MI300X", "8000", gpus_per_node=8, price_unit="month", billing_model="monthly",
          billing_granularity="month"),
    offer("ded", "MI300X", "7000", gpus_per_node=8, price_unit="month", billing_model="dedicated",
          billing_granularity="month", min_term_hours=8760),
    offer("term", "MI300X", "12", gpus_per_node=8, billing_model="reserved", commitment_term_hours=2190),
    offer("spot", "MI300X", "18", gpus_per_node=8, billing_model="spot"),
    offer("qspot", "MI300X", "8", gpus_per_node=8, billing_model="spot", provider="q"),
]


def sustained_con(**extra):
    return build(workloads=[workload("ss", **{**SUSTAINED, **extra})], offers=SUSTAINED_OFFERS,
                 runs=[run("ss", "MI300X", 3600000.0, gpu_count=8)])


def test_sustained_on_demand_pays_busy_hours_and_monthly_the_whole_period():
    c = costs(sustained_con(), "ss")
    od, month = c["od"], c["month"]
    # Busy per month 2e9 / 3.6e6 = 555.555556 h; over 6 months 3,333.33 h → 3,334 h × $16 = $53,344.00.
    assert (od["busy_hours_per_month"], od["hours_billed"], od["total_cost_usd"]) == (
        Decimal("555.555556"), Decimal("3334"), Decimal("53344.00"))
    assert od["cost_per_month_usd"] == Decimal("8890.666667")  # 53,344 / 6
    assert od["cost_per_million_units_usd"] == Decimal("4.445333")  # 53,344 / 12,000 M tokens
    assert od["nodes_for_peak"] == 1 and od["nodes_rented"] is None  # 555.6 h of a 730 h month: one node
    # Monthly: 1 node × 6 months × $8,000 = $48,000 ($8,000 a month): cheaper than on-demand here.
    assert (month["nodes_rented"], month["billing_periods"], month["total_cost_usd"], month["cost_per_month_usd"]) == (
        1, 6, Decimal("48000.00"), Decimal("8000.000000"))
    # Monthly beats on-demand above 8,000 / (16 × 730) = 0.684932 utilisation; this load keeps the node
    # busy 555.555556 / 730 = 0.761035 of the month.
    assert (month["break_even_utilisation"], month["node_utilisation"]) == (Decimal("0.6849"), Decimal("0.7610"))
    assert month["on_demand_usd_per_node_hour"] == Decimal("16")
    ranked = [r["offer_id"] for r in rows(sustained_con(), "select offer_id from rankings order by rank")]
    assert ranked.index("month") < ranked.index("od")


def test_sustained_peak_needs_more_always_on_nodes_and_turns_the_decision():
    c = costs(sustained_con(peak_units_per_hour=5000000), "ss")
    # Peak 5 M tok/h over 3.6 M tok/h per node → ceil(1.39) = 2 nodes; monthly pays both every month:
    # 2 × 6 × $8,000 = $96,000, now dearer than on-demand's $53,344 (busy hours only, unchanged).
    assert (c["od"]["nodes_for_peak"], c["od"]["total_cost_usd"]) == (2, Decimal("53344.00"))
    assert (c["month"]["nodes_rented"], c["month"]["total_cost_usd"], c["month"]["node_utilisation"]) == (
        2, Decimal("96000.00"), Decimal("0.3805"))  # 555.555556 / (2 × 730) = 0.380518


def test_sustained_minimum_term_and_commitment_terms():
    c = costs(sustained_con(), "ss")
    # Dedicated, 12-month minimum term (8,760 h): 12 months × $7,000 = $84,000 for a 6-month need.
    assert (c["ded"]["billing_periods"], c["ded"]["total_cost_usd"]) == (12, Decimal("84000.00"))
    # 3-month commitment at $12/h: ceil(6 × 730 / 2,190) = 2 terms × 2,190 h × $12 = $52,560;
    # it beats on-demand above 12 / 16 = 0.75 utilisation.
    assert (c["term"]["billing_periods"], c["term"]["total_cost_usd"], c["term"]["break_even_utilisation"]) == (
        2, Decimal("52560.00"), Decimal("0.7500"))


def test_spot_above_on_demand_is_a_warning_and_an_assumption_gives_an_expected_cost():
    plain = costs(sustained_con(), "ss")
    # $18 spot against the same provider's $16 on-demand: warned; q has no on-demand offer to compare.
    assert "SPOT_ABOVE_ON_DEMAND" in plain["spot"]["warnings"] and "spot > on-demand" in plain["spot"]["risk_flags"]
    assert "SPOT_ABOVE_ON_DEMAND" not in (plain["qspot"]["warnings"] or [])
    # Without an assumption spot is costed as today (3,334 h × $8 = $26,672) and flagged.
    assert plain["qspot"]["total_cost_usd"] == Decimal("26672.00")
    assert any("no discount for lost work" in n for n in plain["qspot"]["risk_notes"])
    assumed = costs(sustained_con(spot_interruptions_json='[{"provider": "Q", "interruptions_per_hour": "0.1", '
                                                          '"lost_hours_per_interruption": "0.5", "source": "my log"}]'),
                    "ss")
    # λ·L = 0.1 × 0.5 = 0.05 of running time lost: 3,333.333333 h / 0.95 = 3,508.77 h → 3,509 h × $8 = $28,072.
    assert (assumed["qspot"]["hours_needed"], assumed["qspot"]["total_cost_usd"]) == (
        Decimal("3508.771930"), Decimal("28072.00"))
    assert any("my log" in n for n in assumed["qspot"]["risk_notes"])
    assert assumed["spot"]["total_cost_usd"] == plain["spot"]["total_cost_usd"]  # provider p: no assumption


def test_sustained_sensitivity_shows_where_monthly_stops_paying():
    con = build(workloads=[workload("ss", **SUSTAINED)], offers=SUSTAINED_OFFERS[:2],
                runs=[run("ss", "MI300X", 3600000.0, gpu_count=8)])
    sens = {r["offer_id"]: r for r in rows(con, "select * from ranking_sensitivity")}
    # 100 %: monthly $48,000 (1) < on-demand $53,344 (2).
    # 60 %: on-demand 3,333.33 / 0.6 = 5,555.6 → 5,556 h × $16 = $88,896; monthly 555.56 / 0.6 = 925.9 h a
    # month > 730 → 2 nodes × 6 × $8,000 = $96,000: on-demand wins. 30 %: on-demand 11,112 h × $16 =
    # $177,792; monthly 1,851.9 h a month → 3 nodes × 6 × $8,000 = $144,000: monthly wins again.
    assert [(sens[o]["rank_at_100pct"], sens[o]["rank_at_60pct"], sens[o]["rank_at_30pct"]) for o in ("month", "od")] == [
        (1, 2, 1), (2, 1, 2)]
    assert sens["od"]["cost_per_unit_usd_at_60pct"] == Decimal("0.000007408000")  # 88,896 / 1.2e10
    assert sens["month"]["cost_per_unit_usd_at_30pct"] == Decimal("0.000012000000")  # 144,000 / 1.2e10
    # Monthly keeps the lead up to on-demand's $53,344 over 6 node-months = $8,890.67 a node-month.
    assert sens["month"]["break_even_usd_per_node_month"] == Decimal("8890.67")
    assert (sens["month"]["break_even_utilisation"], sens["od"]["break_even_utilisation"]) == (Decimal("0.6849"), None)
