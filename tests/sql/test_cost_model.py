"""The billing-aware cost model on tiny inputs: known answers from the seed and InferenceX, billing rules."""
from decimal import Decimal

from tests.sql_chain import build, offer, rows, run, workload


def costs(con, **where):
    clause = " and ".join(f"{k} = ${k}" for k in where) or "true"
    return rows(con, f"select * from workload_costs where {clause} order by offer_id, billing_model", where)


def seed():
    """Seed 000: the same task, 10 h at $2.00, 7 h at $2.75, 4 h at $4.00."""
    return build(
        workloads=[workload("seed")],
        offers=[offer("mi300x", "MI300X", "2.00"), offer("mi325x", "MI325X", "2.75"), offer("mi350x", "MI350X", "4.00")],
        runs=[run("seed", "MI300X", 1 / 10), run("seed", "MI325X", 1 / 7), run("seed", "MI350X", 1 / 4)],
    )


def test_seed_000_ranks_mi350x_first_at_exactly_16_19_25_20():
    ranked = rows(seed(), "select rank, gpu_model, hours_billed, total_cost_usd, cost_per_unit_usd from rankings "
                          "order by rank")
    assert [(r["rank"], r["gpu_model"], r["hours_billed"], r["total_cost_usd"]) for r in ranked] == [
        (1, "MI350X", Decimal("4"), Decimal("16.00")),
        (2, "MI325X", Decimal("7"), Decimal("19.25")),
        (3, "MI300X", Decimal("10"), Decimal("20.00"))]
    assert all(r["cost_per_unit_usd"] == r["total_cost_usd"] for r in ranked)


def test_seed_000_break_even_prices():
    sens = {r["gpu_model"]: r for r in rows(seed(), "select * from ranking_sensitivity")}
    # MI325X overtakes at $16.00 / 7 h; MI300X at $16.00 / 10 h; MI350X keeps the lead up to $19.25 / 4 h.
    assert sens["MI325X"]["break_even_usd_per_node_hour"] == Decimal("2.285714")
    assert sens["MI300X"]["break_even_usd_per_gpu_hour"] == Decimal("1.600000")
    assert sens["MI300X"]["break_even_change_pct"] == Decimal("-20.00")
    assert sens["MI350X"]["break_even_usd_per_node_hour"] == Decimal("4.812500")
    assert sens["MI350X"]["compared_with_offer_id"] == "mi325x"
    # On-demand hourly billing: utilisation scales every cost alike, so the order holds.
    assert [(sens[g]["rank_at_30pct"], sens[g]["rank_at_60pct"], sens[g]["rank_at_100pct"])
            for g in ("MI350X", "MI325X", "MI300X")] == [(1, 1, 1), (2, 2, 2), (3, 3, 3)]
    # 4 h / 0.3 = 13.3 h → 14 h billed at $4.00.
    assert sens["MI350X"]["cost_per_unit_usd_at_30pct"] == Decimal("56")


def test_inferencex_cost_per_million_tokens():
    """15000.5 tok/s on 8 × MI300X at $1.12/GPU-h → $0.1659 per million total tokens (per-second billing)."""
    con = build(
        workloads=[workload("ix", quantity=10**9, unit="total_tokens", kind="inference")],
        offers=[offer("mi300x-8", "MI300X", "1.12", gpus_per_node=8, price_scope="per_gpu",
                      billing_granularity="second")],
        runs=[run("ix", "MI300X", 15000.5 * 3600, gpu_count=8)],
    )
    [row] = costs(con)
    assert row["billed_seconds"] == 66665  # ceil(1e9 / 15000.5) s
    assert row["compute_cost_usd"] == Decimal("165.921778")  # 8.96 $/h × 66665 s / 3600, to the micro-dollar
    assert round(row["cost_per_million_units_usd"], 4) == Decimal("0.1659")


def test_hourly_granularity_bills_whole_hours_and_minute_whole_minutes():
    con = build(
        workloads=[workload("w", quantity=1)],
        offers=[offer("hourly", price="3.00"), offer("minutely", price="3.00", billing_granularity="minute"),
                offer("secondly", price="3.00", billing_granularity="second")],
        runs=[run("w", "MI300X", 3600 / 61.5)],  # the job takes 61.5 s
    )
    billed = {r["offer_id"]: (r["billed_seconds"], r["compute_cost_usd"]) for r in costs(con)}
    assert billed == {"hourly": (3600, Decimal("3.00")), "minutely": (120, Decimal("0.10")),
                      "secondly": (62, Decimal("0.051667"))}  # 62 s × $3/h = $0.051666…


def test_monthly_bills_whole_months_at_the_monthly_price_and_utilisation_stretches_them():
    def monthly(utilisation):
        con = build(workloads=[workload("w", quantity=1000, utilisation=utilisation)],
                    offers=[offer("do", price="11844.48", gpus_per_node=8, price_unit="month",
                                  billing_model="monthly", billing_granularity="month")],
                    runs=[run("w", "MI300X", 1.0, gpu_count=8)])
        return costs(con)[0]

    full = monthly(1)
    assert (full["billing_period"], full["billing_periods"], full["compute_cost_usd"]) == (
        "month", 2, Decimal("23688.96"))  # 1000 h → ceil(1000 / 730) = 2 months
    assert full["hours_billed"] == Decimal("1460")
    half = monthly(Decimal("0.5"))
    # months = ceil(1000 / (730 × 0.5)) = 3, billed at the stated monthly price (no hourly rounding).
    assert (half["billing_periods"], half["compute_cost_usd"], half["hours_needed"]) == (
        3, Decimal("35533.44"), Decimal("2000"))


def test_dedicated_minimum_term_and_setup_fee():
    con = build(workloads=[workload("w", quantity=10)],
                offers=[offer("ded", price="9000", gpus_per_node=8, price_unit="month", billing_model="dedicated",
                              billing_granularity="month", min_term_hours=2190, setup_fee_usd=500)],
                runs=[run("w", "MI300X", 1.0, gpu_count=8)])
    [row] = costs(con)
    assert (row["billing_periods"], row["compute_cost_usd"], row["setup_cost_usd"], row["total_cost_usd"]) == (
        3, Decimal("27000.00"), Decimal("500.00"), Decimal("27500.00"))


def test_commitment_terms_are_billed_whole():
    con = build(workloads=[workload("short", quantity=10), workload("long", quantity=200)],
                offers=[offer("week", price="1.80", gpus_per_node=8, price_scope="per_gpu", billing_model="reserved",
                              commitment_term_hours=168)],
                runs=[run("short", "MI300X", 1.0, gpu_count=8), run("long", "MI300X", 1.0, gpu_count=8)])
    billed = {r["workload_id"]: (r["billing_periods"], r["hours_billed"], r["compute_cost_usd"])
              for r in costs(con)}
    assert billed == {"short": (1, Decimal("168"), Decimal("2419.20")),   # 168 h × 14.40
                      "long": (2, Decimal("336"), Decimal("4838.40"))}    # 200 h → two whole weeks


def test_every_cost_line_and_support_per_month_started():
    con = build(workloads=[workload("w", quantity=1, storage_gb=1000, egress_gb=500, setup_hours=1)],
                offers=[offer("all", price="10", storage_usd_per_gb_month="0.10", egress_usd_per_gb="0.01",
                              licence_usd_per_hour="0.50", setup_fee_usd=25, support_usd_per_month=100)],
                runs=[run("w", "MI300X", 1 / 99)])
    [row] = costs(con)
    assert row["hours_billed"] == Decimal("100")  # 99 h + 1 h setup
    assert {k: row[k] for k in ("compute_cost_usd", "storage_cost_usd", "egress_cost_usd", "licence_cost_usd",
                                "setup_cost_usd", "support_cost_usd", "total_cost_usd")} == {
        "compute_cost_usd": Decimal("1000.00"), "storage_cost_usd": Decimal("13.698630"),  # 1000 × 0.10 × 100/730
        "egress_cost_usd": Decimal("5.00"), "licence_cost_usd": Decimal("50.00"), "setup_cost_usd": Decimal("25.00"),
        "support_cost_usd": Decimal("100.00"), "total_cost_usd": Decimal("1193.698630")}


def test_spot_is_flagged_not_discounted():
    con = build(workloads=[workload("w")], offers=[offer("spot", price="1.00", billing_model="spot")],
                runs=[run("w", "MI300X", 0.5)])
    [row] = costs(con)
    assert row["is_interruptible"] and row["status"] == "ranked"
    assert row["total_cost_usd"] == Decimal("2.00")
    assert row["risk_notes"][0].startswith("SPOT_INTERRUPTION_RISK")


def test_multi_node_only_with_runs_at_that_gpu_count():
    memory = [{"workload_id": "big", "gpu_model": "MI300X", "gpu_count": 8, "fits": False,
               "precision_supported": True, "min_gpus": 16}]
    base = dict(workloads=[workload("big", kind="inference")],
                offers=[offer("node8", price="16", gpus_per_node=8)], memory=memory)
    without = costs(build(**base, runs=[run("big", "MI300X", 1.0, gpu_count=8)]))
    assert [(r["node_count"], r["gpu_count"], r["status"], r["exclusion_reasons"]) for r in without] == [
        (2, 16, "excluded", ["NO_BENCHMARK"])]  # an 8-GPU run is never stretched to 16 GPUs
    [row] = costs(build(**base, runs=[run("big", "MI300X", 0.1, gpu_count=16)]))
    assert (row["node_count"], row["gpu_count"], row["status"], row["memory_fits"]) == (2, 16, "ranked", True)
    assert row["compute_cost_usd"] == Decimal("320.00")  # 10 h × 2 nodes × $16
    assert any(n.startswith("MULTI_NODE") for n in row["risk_notes"])


def test_estimates_are_labelled_and_ranked_apart():
    con = build(workloads=[workload("chat", kind="inference", unit="requests", quantity=1000)],
                offers=[offer("measured", "MI300X", "2.00"), offer("guess", "MI355X", "2.50"),
                        offer("elsewhere", "MI300X", "1.50", provider="q")],
                runs=[run("chat", "MI300X", 100.0, run_provider="p")])
    by_offer = {r["offer_id"]: r for r in costs(con)}
    assert by_offer["measured"]["status"] == "ranked"
    guesses = rows(con, "select * from workload_costs where throughput_source = 'estimate' order by offer_id")
    assert {g["offer_id"]: g["status"] for g in guesses} == {"elsewhere": "estimated", "guess": "estimated"}
    mi355 = next(g for g in guesses if g["offer_id"] == "guess")
    assert abs(float(mi355["units_per_hour"]) - 100.0 * 8.0 / 5.3) < 1e-9
    assert "scaled by memory bandwidth 8.0 / 5.3 TB/s" in mi355["estimate_basis"]
    # The measured-but-unmatched rows stay excluded; rankings hold measured rows only.
    assert rows(con, "select offer_id from rankings") == [{"offer_id": "measured"}]
    assert [r["offer_id"] for r in rows(con, "select offer_id from estimate_rankings order by rank")] == [
        "elsewhere", "guess"]


def test_cross_model_estimates_only_for_inference():
    con = build(workloads=[workload("job")], offers=[offer("guess", "MI355X", "2.50")], runs=[run("job", "MI300X")])
    assert rows(con, "select count(*) as n from workload_costs where throughput_source = 'estimate'") == [{"n": 0}]


def test_nan_inf_zero_throughput_never_ranks():
    con = build(workloads=[workload("w")],
                offers=[offer(g, g, "1.00") for g in ("MI300X", "MI325X", "MI350X", "MI355X")],
                runs=[run("w", "MI300X", float("nan")), run("w", "MI325X", float("inf")), run("w", "MI350X", 0.0),
                      run("w", "MI355X", 0.001)])
    assert rows(con, "select gpu_model, rank from rankings") == [{"gpu_model": "MI355X", "rank": 1}]
    excluded = rows(con, "select gpu_model, exclusion_reasons from workload_costs where status = 'excluded'")
    assert all(r["exclusion_reasons"] == ["NO_BENCHMARK"] for r in excluded) and len(excluded) == 3


def test_utilisation_moves_monthly_against_hourly():
    """500 busy hours: hourly wins at 100 %; at 30 % the hours stretch to 1,667 and the monthly server wins."""
    con = build(workloads=[workload("w", quantity=500)],
                offers=[offer("hourly", price="10"),
                        offer("monthly", price="5100", price_unit="month", billing_model="monthly",
                              billing_granularity="month")],
                runs=[run("w", "MI300X", 1.0)])
    sens = {r["offer_id"]: r for r in rows(con, "select * from ranking_sensitivity")}
    assert (sens["hourly"]["rank"], sens["hourly"]["rank_at_100pct"], sens["hourly"]["rank_at_30pct"]) == (1, 1, 2)
    assert (sens["monthly"]["rank_at_100pct"], sens["monthly"]["rank_at_30pct"]) == (2, 1)
    assert sens["monthly"]["cost_per_unit_usd_at_30pct"] * 500 == Decimal("15300")  # 3 months


def test_the_same_offer_in_two_sources_is_costed_once_from_the_latest_observation():
    newer = offer("cat-8x", price="16", gpus_per_node=8, provider="do", source_name="catalog",
                  observed_at="2026-11-29 00:00:00+00")
    older = offer("pp-8x", price="15", gpus_per_node=8, provider="do", source_name="price-points",
                  observed_at="2025-08-29 00:00:00+00")
    other_billing = offer("pp-8x", price="1000", gpus_per_node=8, provider="do", source_name="price-points",
                          billing_model="monthly", price_unit="month", billing_granularity="month")
    same_source_twin = offer("cat-8x-eu", price="17", gpus_per_node=8, provider="do", source_name="catalog",
                             observed_at="2026-11-28 00:00:00+00")
    pending = offer("quote-pending", price="1", gpus_per_node=8, provider="do", source_name="quotes",
                    observed_at="2026-11-30 00:00:00+00")
    pending.update(price_amount=None, usd_per_node_hour=None, usd_per_gpu_hour=None)
    con = build(workloads=[workload("w")], offers=[older, newer, other_billing, same_source_twin, pending],
                runs=[run("w", "MI300X", 1.0, gpu_count=8)])
    ranked = rows(con, "select offer_id, source_name, billing_model, also_seen_in from rankings order by offer_id")
    assert [(r["offer_id"], r["billing_model"]) for r in ranked] == [
        ("cat-8x", "on_demand"), ("cat-8x-eu", "on_demand"), ("pp-8x", "monthly")]
    assert ranked[0]["also_seen_in"] == ["price-points (pp-8x, observed 2025-08-29)"]
    assert ranked[2]["also_seen_in"] == []  # only one source has the monthly option
    assert rows(con, "select count(*) as n from workload_costs where offer_id in ('pp-8x', 'quote-pending') "
                     "and billing_model = 'on_demand'") == [{"n": 0}]  # the older duplicate and the unpriced quote
    # A tie on the observation time goes to the source name, so the outcome never depends on row order.
    tie = dict(older, observed_at="2026-11-29 00:00:00+00")
    assert [r["source_name"] for r in rows(build(workloads=[workload("w")], offers=[newer, tie],
                                                 runs=[run("w", "MI300X", 1.0, gpu_count=8)]),
                                           "select source_name from workload_costs")] == ["catalog"]


def test_monthly_break_even_is_also_a_monthly_price():
    """Hourly leader: 500 h × $10 = $5,000. Monthly challenger at $5,100 / month: break-even $5,000 per node-month."""
    con = build(workloads=[workload("w", quantity=500)],
                offers=[offer("hourly", price="10"),
                        offer("monthly", price="5100", gpus_per_node=8, price_unit="month", billing_model="monthly",
                              billing_granularity="month")],
                runs=[run("w", "MI300X", 1.0), run("w", "MI300X", 1.0, gpu_count=8)])
    sens = {r["offer_id"]: r for r in rows(con, "select * from ranking_sensitivity")}
    monthly = sens["monthly"]
    assert (monthly["rank"], monthly["usd_per_node_month"]) == (2, Decimal("5100"))
    assert monthly["break_even_usd_per_node_month"] == Decimal("5000.00")
    assert monthly["break_even_usd_per_gpu_month"] == Decimal("625.00")
    assert monthly["break_even_usd_per_node_hour"] == Decimal("6.849315")  # 5000 / 730 h
    assert sens["hourly"]["break_even_usd_per_node_month"] is None
