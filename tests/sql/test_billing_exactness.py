"""Billed periods come from exact arithmetic: a need that is an exact multiple of the billing period never bills one more.

Thousands of exact multiples (hours 1–1000, minutes, seconds, 730 h months 1–200, weekly commitment terms,
utilisation below 1, setup hours) go through int_workload_cost_lines.sql, the SQL that bills, with the
measured rate given as the binary float (DOUBLE) a benchmark produces: quantity / rate is the exact
multiple as a fraction, but not as a float.
"""
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.sql_chain import GRANULARITY_S, bench_run, build, offer, rebuild, rows, run, table, workload

# No shrinking: a failure already lists the wrongly billed cases, and shrinking 500-case batches takes minutes.
SETTINGS = settings(max_examples=8, deadline=None, derandomize=True, phases=[Phase.explicit, Phase.generate], suppress_health_check=[HealthCheck.too_slow, HealthCheck.large_base_example])
UTILISATIONS = [Fraction(1), Fraction(3, 10), Fraction(6, 10), Fraction(85, 100), Fraction(1, 2), Fraction(9, 10)]
# How each billing period is declared on an offer, and its length in hours.
PERIODS = {
    "hour": (dict(billing_granularity="hour"), Fraction(1)),
    "minute": (dict(billing_granularity="minute"), Fraction(1, 60)),
    "second": (dict(billing_granularity="second"), Fraction(1, 3600)),
    "month": (dict(billing_model="monthly", billing_granularity="month", price_unit="month"), Fraction(730)),
    "week": (dict(billing_model="reserved", commitment_term_hours=Decimal(168)), Fraction(168)),
}
MAX_PERIODS = {"hour": 1000, "minute": 100_000, "second": 1_000_000, "month": 200, "week": 500}


@st.composite
def exact_multiple(draw):
    """(period, n periods, quantity, measured rate as a float, utilisation, setup hours): needs exactly n periods."""
    period = draw(st.sampled_from(list(PERIODS)))
    n = draw(st.integers(1, MAX_PERIODS[period]))
    hours = n * PERIODS[period][1]
    u = draw(st.sampled_from(UTILISATIONS))
    # Setup hours (whole hours, only where the need is longer) take part of the time needed.
    setup = draw(st.integers(0, 2)) if hours > 2 and period == "hour" else 0
    busy = (hours - setup) * u
    # Quantities as workloads declare them: whole jobs, requests, tokens (up to 10^12) or a decimal amount.
    quantity = draw(st.one_of(st.integers(1, 20), st.integers(1, 10**6), st.integers(10**9, 10**12),
                              st.decimals(Decimal("0.1"), Decimal("5000"), places=3)))
    quantity = Fraction(quantity)
    rate = float(quantity / busy)  # the benchmark's measured rate: a DOUBLE, exact only by luck
    return period, n, quantity, rate, u, setup


def _bill(cases) -> list[dict]:
    """Run int_workload_cost_lines.sql on one configuration per case (declared utilisation)."""
    template = build(workloads=[workload("w")], offers=[offer("o")], runs=[run("w", "MI300X", 1.0)],
                     targets=["int_workload_cost_lines"])
    template.execute("create table cases (case_id integer, quantity decimal(38, 6), units_per_hour double, "
                     "utilisation decimal(38, 6), setup_hours decimal(38, 6), billing_model varchar, "
                     "billing_granularity varchar, billing_granularity_s integer, commitment_term_hours decimal(18, 6))")
    for i, (period, _, quantity, rate, u, setup) in enumerate(cases):
        spec = {**dict(billing_model="on_demand", billing_granularity=None, commitment_term_hours=None), **PERIODS[period][0]}
        granularity = spec["billing_granularity"]
        template.execute("insert into cases values (?, ?, ?, ?, ?, ?, ?, ?, ?)", [
            i, Decimal(quantity.numerator) / quantity.denominator, rate, Decimal(u.numerator) / u.denominator,
            setup, spec["billing_model"], granularity, GRANULARITY_S.get(granularity), spec["commitment_term_hours"]])
    template.execute(f"""
        create or replace table {table("stg_workloads")} as
        select w.* replace ('case-' || c.case_id as workload_id, c.utilisation as utilisation)
        from stg_workloads as w cross join cases as c""")
    template.execute(f"""
        create or replace table {table("int_workload_configurations")} as
        select t.* replace (
            'case-' || c.case_id as workload_id, c.quantity::decimal(38, 6) as quantity,
            c.units_per_hour as units_per_hour, c.setup_hours::decimal(38, 6) as setup_hours,
            c.billing_model as billing_model, c.billing_granularity as billing_granularity,
            c.billing_granularity_s as billing_granularity_s,
            c.commitment_term_hours::decimal(18, 6) as commitment_term_hours)
        from int_workload_configurations as t cross join cases as c""")
    rebuild(template, ["int_workload_cost_lines"], replaced=["stg_workloads", "int_workload_configurations"])
    return rows(template, "select workload_id, billing_periods, billed_seconds, hours_needed from int_workload_cost_lines "
                          "where utilisation_scenario = 'declared' order by workload_id")


def _assert_exact(cases):
    by_id = {r["workload_id"]: r for r in _bill(cases)}
    wrong = []
    for i, (period, n, quantity, rate, u, setup) in enumerate(cases):
        got = by_id[f"case-{i}"]
        if got["billing_periods"] != n:
            wrong.append(f"{quantity} units at {rate!r}/h, utilisation {u}, setup {setup} h: "
                         f"{got['billing_periods']} {period}(s) billed, needs exactly {n}")
    assert not wrong, f"{len(wrong)} of {len(cases)} exact multiples billed wrongly, e.g. " + "; ".join(wrong[:5])


@SETTINGS
@given(cases=st.lists(exact_multiple(), min_size=500, max_size=500))
def test_an_exact_multiple_of_the_billing_period_never_bills_an_extra_period(cases):
    _assert_exact(cases)


def test_every_whole_hour_month_and_week_sweep_bills_exactly():
    """Exhaustive sweeps: hours 1–1000, months 1–200, weeks 1–200, at rates that are not binary fractions."""
    one = Fraction(1)
    cases = [("hour", h, one, float(1 / Fraction(h)), one, 0) for h in range(1, 1001)]  # 1 job measured per h hours
    cases += [("hour", h, Fraction(7), float(Fraction(7, h)), one, 0) for h in range(1, 1001)]
    cases += [("hour", h, Fraction(h * 11, 10), 1.1, one, 0) for h in range(1, 1001)]
    cases += [("hour", h, Fraction(h * 3, 100), 0.03, one, 0) for h in range(1, 1001)]
    cases += [("month", m, Fraction(m * 657, 10), 0.09, one, 0) for m in range(1, 201)]
    cases += [("month", m, one, float(Fraction(1, 730 * m)), one, 0) for m in range(1, 201)]
    cases += [("week", w, Fraction(3024 * w, 1000), 0.03, Fraction(6, 10), 0) for w in range(1, 201)]
    _assert_exact(cases)


# Hand-calculated cases through the whole cost model (configurations, cost lines, workload_costs).

def _costs(**kw) -> dict:
    con = build(**kw)
    (row,) = rows(con, "select * from workload_costs")
    return row


def test_ten_units_at_two_and_a_half_per_hour_bill_exactly_four_hours():
    row = _costs(workloads=[workload("w", quantity=10)], offers=[offer("o", price=Decimal("4"))],
                 runs=[run("w", "MI300X", 2.5)])
    assert (row["billing_periods"], row["hours_billed"], row["total_cost_usd"]) == (4, Decimal(4), Decimal(16))


def test_nine_tenths_at_three_hundredths_per_hour_is_thirty_hours_not_thirty_one():
    """0.9 / 0.03 is 30.000000000000004 in floats: a ceil() of it billed a 31st hour."""
    row = _costs(workloads=[workload("w", quantity=Decimal("0.9"))], offers=[offer("o", price=Decimal("2"))],
                 runs=[run("w", "MI300X", 0.03)])
    assert (row["hours_needed"], row["billing_periods"], row["total_cost_usd"]) == (Decimal(30), 30, Decimal(60))


def test_a_730_hour_job_on_a_monthly_offer_is_one_month():
    """65.7 units at 0.09 units/h need exactly 730 h: one month at the monthly price, not two (+100 %)."""
    row = _costs(workloads=[workload("w", quantity=Decimal("65.7"))],
                 offers=[offer("o", price=Decimal("1460"), price_unit="month", billing_model="monthly",
                               billing_granularity="month")],
                 runs=[run("w", "MI300X", 0.09)])
    assert (row["billing_periods"], row["hours_billed"], row["compute_cost_usd"]) == (1, Decimal(730), Decimal(1460))


def test_a_job_measured_at_one_per_49_hours_bills_49_hours():
    """A benchmark that completed 1 job in 176,400 s measures 1/49 job per hour, a float that is not 1/49."""
    runs = [bench_run("r1", unit="jobs", completed=1.0, duration_s=176400.0, units_per_hour=1 * 3600.0 / 176400.0,
                      output_tokens_per_s=None, workload_id="w")]
    row = _costs(workloads=[workload("w", quantity=1)], offers=[offer("o", price=Decimal("2"))], bench_runs=runs)
    assert (row["billing_periods"], row["hours_billed"], row["total_cost_usd"]) == (49, Decimal(49), Decimal(98))


def test_utilisation_below_one_stretches_the_hours_exactly():
    """2.1 jobs at 1 job/h measured, 30 % utilised: 2.1 / 0.3 = 7 h, not 8."""
    row = _costs(workloads=[workload("w", quantity=Decimal("2.1"), utilisation=Decimal("0.3"))],
                 offers=[offer("o", price=Decimal("1"))], runs=[run("w", "MI300X", 1.0)])
    assert (row["hours_needed"], row["billing_periods"], row["total_cost_usd"]) == (Decimal(7), 7, Decimal(7))


def test_one_weekly_term_at_sixty_percent_utilisation():
    """3.024 jobs at 0.03 jobs/h, 60 % utilised: 3.024 / 0.018 = 168 h = exactly one 168 h term, not two."""
    row = _costs(workloads=[workload("w", quantity=Decimal("3.024"), utilisation=Decimal("0.6"))],
                 offers=[offer("o", price=Decimal("1"), billing_model="reserved", commitment_term_hours=Decimal(168))],
                 runs=[run("w", "MI300X", 0.03)])
    assert (row["hours_needed"], row["billing_periods"], row["hours_billed"]) == (Decimal(168), 1, Decimal(168))


def test_a_need_one_microsecond_past_the_hour_still_bills_the_next_hour():
    """Exactness cuts both ways: 3,600.000001 s of work at hourly billing is two hours."""
    row = _costs(workloads=[workload("w", quantity=Decimal("3600.000001"))], offers=[offer("o", price=Decimal("1"))],
                 runs=[run("w", "MI300X", 3600.0)])
    assert row["billing_periods"] == 2


@pytest.mark.parametrize("units_per_hour", [1e-15, 1e25, 5e-324])
def test_a_nonsense_rate_is_excluded_not_an_overflow(units_per_hour):
    """A rate needing over 10^12 hours (or above 10^20 units/h) would overflow the exact integers."""
    row = _costs(workloads=[workload("w", quantity=1000)], offers=[offer("o")], runs=[run("w", "MI300X", units_per_hour)])
    assert row["status"] == "excluded" and "DURATION_OUT_OF_RANGE" in row["exclusion_reasons"]
    assert row["billing_periods"] is None and row["total_cost_usd"] is None
