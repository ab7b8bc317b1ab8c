-- One row per configuration (int_workload_configurations) × utilisation scenario
-- (int_utilisation_scenarios): the busy time, hours needed and the billing periods and seconds billed,
-- all in exact integers (docs/cost-model.md#exact-billing). Ephemeral: a step of
-- int_workload_cost_lines (inlined there as a CTE), not a table of its own — at bench scale it
-- would be a second copy of the widest table of the build.
{{ config(materialized='ephemeral') }}

with configurations as (
    select * from {{ ref('int_workload_configurations') }}
),

scenarios as (
    select * from {{ ref('int_utilisation_scenarios') }}
),

conventions as (
    select seconds_per_month, microseconds_per_month from {{ ref('stg_conventions') }}
),

rates as (
    select
        c.*,
        s.utilisation_scenario,
        s.utilisation_applied,
        conv.seconds_per_month, conv.microseconds_per_month,
        c.billing_model in ('monthly', 'dedicated') as is_billed_monthly,
        -- A measured rate is a binary float (DOUBLE). It is read once as the decimal m × 10^-k with a
        -- 16-digit integer m (docs/cost-model.md#exact-billing); every time below is a whole number of
        -- microseconds or an exact fraction of integers, so no float is ever ceil()ed.
        15 - floor(log10(c.units_per_hour))::integer as rate_scale,
        -- More than 10^12 hours, or a rate above 10^20 units/h (a nonsense rate or quantity), would
        -- overflow the exact 128-bit integers below: DURATION_OUT_OF_RANGE instead.
        c.quantity::double / c.units_per_hour <= 1e12 and c.units_per_hour <= 1e20 as is_duration_in_range
    from configurations as c
    join scenarios as s using (workload_id)
    cross join conventions as conv
),

rate_digits as (
    select
        *,
        case when is_duration_in_range then (units_per_hour * pow(10, rate_scale))::hugeint end as rate_mantissa,
        case when is_duration_in_range then ('1' || repeat('0', abs(rate_scale)))::hugeint end as rate_pow10
    from rates
),

busy as (
    select
        *,
        -- Busy time = quantity / rate, rounded half-up to the microsecond: (2n + d) // 2d of
        -- n = quantity × 3.6e9 µs·units/h × 10^k and d = m (or n and d × 10^-k when k < 0).
        case when is_duration_in_range then
            case when rate_scale >= 0
                then ((quantity * 1000000)::hugeint * 7200 * rate_pow10 + rate_mantissa) // (2 * rate_mantissa)
                else ((quantity * 1000000)::hugeint * 7200 + rate_mantissa * rate_pow10) // (2 * rate_mantissa * rate_pow10)
            end
        end as busy_us,
        (utilisation_applied * 1000000)::hugeint as utilisation_ppm,
        (setup_hours * 3600000000)::hugeint as setup_us,
        (min_term_hours * 3600000000)::hugeint as min_term_us,
        (commitment_term_hours * 3600000000)::hugeint as commitment_term_us
    from rate_digits
),

hours as (
    select
        *,
        -- Hours needed = busy / utilisation + setup, kept exact as the fraction
        -- need_num / need_den microseconds (need_den = utilisation in parts per million).
        busy_us * 1000000 + setup_us * utilisation_ppm as need_num,
        utilisation_ppm as need_den
    from busy
),

billed as (
    select
        *,
        -- ceil(a / b) of positive integers is (a + b - 1) // b: exact, whatever the size.
        case
            when need_num is null then null
            -- Monthly / dedicated: whole months (730 h = 2,628,000,000,000 µs), at least the minimum term.
            when is_billed_monthly then greatest(
                (need_num + need_den * microseconds_per_month - 1) // (need_den * microseconds_per_month),
                (min_term_us + microseconds_per_month - 1) // microseconds_per_month, 1)
            -- A commitment is paid for in whole terms.
            when commitment_term_hours is not null then greatest(
                (need_num + need_den * commitment_term_us - 1) // (need_den * commitment_term_us), 1)
            -- Otherwise whole billing increments (second / minute / hour / month).
            else (need_num + need_den * billing_granularity_s * 1000000 - 1)
                // (need_den * billing_granularity_s * 1000000)
        end::hugeint as billing_periods,
        case
            when is_billed_monthly then 'month'
            when commitment_term_hours is not null then 'commitment_term'
            else billing_granularity
        end as billing_period
    from hours
),

final as (
    select
        *,
        case
            when billing_periods is null then null
            when is_billed_monthly then billing_periods * seconds_per_month
            when commitment_term_hours is not null
                then greatest(billing_periods * ceil(commitment_term_hours * 3600), ceil(min_term_hours * 3600))
            else greatest(billing_periods * billing_granularity_s, ceil(min_term_hours * 3600))
        end::hugeint as billed_s
    from billed
)

select * from final
