"""int_workload_cost_lines writes units_per_hour (m × 10^-k) to 18 decimals from integers; it must
equal the text-to-DECIMAL cast it replaced (that cast was ~95 % of the model's time at bench scale)."""
import re

import duckdb

from provider_eval.paths import SQL_DIR

MODEL = SQL_DIR / "models" / "intermediate" / "int_workload_cost_lines.sql"


def _model_expression() -> str:
    """The model's own units_per_hour expression (the text between `(case` and `as units_per_hour`)."""
    text = MODEL.read_text(encoding="utf-8")
    match = re.search(r"(\(case\s+when rate_scale < 0.*?::decimal\(38, 18\)) as units_per_hour", text, re.S)
    assert match, "units_per_hour expression not found in the model"
    return match.group(1)


def test_units_per_hour_equals_the_decimal_cast_of_its_mantissa_and_scale():
    con = duckdb.connect()
    # Rates as the billed-time step reads them: 10^-9 to 10^19 units/h (k from 24 down to -4),
    # including the round and awkward ones, with the mantissa and powers it computes.
    con.execute("""
        create table rates as
        select u, rate_scale, (u * pow(10, rate_scale))::hugeint as rate_mantissa,
            ('1' || repeat('0', abs(rate_scale)))::hugeint as rate_pow10
        from (
            select u, 15 - floor(log10(u))::integer as rate_scale from (
                select pow(10, random() * 28 - 9) * (1 + random()) as u from range(20000)
                union all select unnest([1.0, 0.5, 2.5e-4, 0.0012345678901234567, 123.456, 1e-9, 9.99e18,
                                         3.3333333333333335e-19, 1234.5678, 5e-7, 7.0])
            )
        )""")
    expected = "format('{}e{}', rate_mantissa, -rate_scale)::decimal(38, 18)"
    rows, differ = con.execute(
        f"select count(*), count(*) filter (where {_model_expression()} is distinct from {expected}) from rates"
    ).fetchone()
    assert rows == 20011 and differ == 0
    # Nulls (no measured rate, or a duration out of range) stay null.
    assert con.execute(f"select {_model_expression()} from (select null::hugeint as rate_mantissa, "
                       "null::integer as rate_scale, null::hugeint as rate_pow10)").fetchone() == (None,)
