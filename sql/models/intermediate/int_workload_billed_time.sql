-- One row per configuration (int_workload_configurations) × utilisation scenario
-- (int_utilisation_scenarios): the busy time, hours needed and the billing periods and seconds billed,
-- all in exact integers (docs/cost-model.md#exact-billing). Ephemeral: a step of
-- int_workload_cost_lines (inlined there as a CTE), not a table of its own — at bench scale it
-- would be a second copy of the widest table of the build.
{{ config(materialized='ephemeral') }}

with configurations as (
    -- The configurations this build (re)computed: every one in a full build, only the new and
    -- changed offer options' in an incremental one (int_workload_configurations.built_by).
    select * exclude (built_by) from {{ ref('int_workload_configurations') }} where built_by = '{{ invocation_id }}'
),

scenarios as (
    select * from {{ ref('int_utilisation_scenarios') }}
),

conventions as (
    select hours_per_month, seconds_per_month, microseconds_per_month from {{ ref('stg_conventions') }}
),

rates as (
    select
        c.*,
        s.utilisation_scenario,
        s.utilisation_applied,
        conv.hours_per_month, conv.seconds_per_month, conv.microseconds_per_month,
        c.billing_model in ('monthly', 'dedicated') as is_billed_monthly,
        -- Sustained demand on capacity paid whether busy or not (months, commitment terms): as many
        -- nodes as the peak (or the monthly volume) needs, for the whole period (docs/workloads.md).
        c.demand_kind = 'sustained' and (c.billing_model in ('monthly', 'dedicated') or c.commitment_term_hours is not null)
            as is_always_on,
        -- Busy volumes: the quantity; for sustained demand also one month's units and the peak rate for a month.
        c.units_per_month as month_quantity,
        coalesce(c.peak_units_per_hour * conv.hours_per_month, c.units_per_month) as peak_month_quantity,
        -- A measured rate is a binary float (DOUBLE). It is read once as the decimal m × 10^-k with a
        -- 16-digit integer m (docs/cost-model.md#exact-billing); every time below is a whole number of
        -- microseconds or an exact fraction of integers, so no float is ever ceil()ed.
        15 - floor(log10(c.units_per_hour))::integer as rate_scale,
        -- More than 10^12 hours, or a rate above 10^20 units/h (a nonsense rate or quantity), would
        -- overflow the exact 128-bit integers below: DURATION_OUT_OF_RANGE instead.
        -- A spot interruption assumption multiplies the integers by 10^12 more: at most 10^6 hours then.
        greatest(c.quantity::double, coalesce(c.peak_units_per_hour, 0)::double * conv.hours_per_month) / c.units_per_hour
            <= case when c.spot_interruptions_per_hour is null then 1e12 else 1e6 end
            and c.units_per_hour <= 1e20 as is_duration_in_range
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
        {%- for column, q in [('busy_us', 'quantity'), ('busy_month_us', 'month_quantity'),
                              ('busy_peak_month_us', 'peak_month_quantity')] %}
        case when is_duration_in_range then
            case when rate_scale >= 0
                then (({{ q }} * 1000000)::hugeint * 7200 * rate_pow10 + rate_mantissa) // (2 * rate_mantissa)
                else (({{ q }} * 1000000)::hugeint * 7200 + rate_mantissa * rate_pow10) // (2 * rate_mantissa * rate_pow10)
            end
        end as {{ column }},
        {%- endfor %}
        (utilisation_applied * 1000000)::hugeint as utilisation_ppm,
        -- Spot with the user's interruption assumption (λ interruptions/h, L hours lost each): the
        -- share of running time whose work survives is 1 − λ·L, in parts per 10^12 (exact).
        case when spot_interruptions_per_hour is not null then 1000000000000::hugeint
            - (spot_interruptions_per_hour * 1000000)::hugeint * (spot_lost_hours_per_interruption * 1000000)::hugeint
        end as surviving_ppt,
        (setup_hours * 3600000000)::hugeint as setup_us,
        (deadline_hours * 3600000000)::hugeint as deadline_us,
        (min_term_hours * 3600000000)::hugeint as min_term_us,
        (commitment_term_hours * 3600000000)::hugeint as commitment_term_us
    from rate_digits
),

hours as (
    select
        *,
        -- Hours needed = busy / (utilisation × surviving share) + setup, kept exact as the fraction
        -- need_num / need_den microseconds (need_den = utilisation in parts per million, times the
        -- surviving share in parts per 10^12 where a spot assumption applies).
        busy_us * busy_scale + setup_us * need_den as need_num,
        -- One month's demand and the peak for a month, as the same fractions (sustained demand).
        busy_month_us * busy_scale as month_need_num,
        busy_peak_month_us * busy_scale as peak_month_need_num
    from (
        select
            *,
            case when surviving_ppt is null then 1000000::hugeint else 1000000000000000000::hugeint end as busy_scale,
            case when surviving_ppt is null then utilisation_ppm else utilisation_ppm * surviving_ppt end as need_den
        from busy
    )
),

replicas as (
    select
        *,
        -- Copies of the configuration the demand needs at once: the peak's (else the monthly
        -- volume's) busy time over a month's hours, at least 1. Independent copies: no multi-node run needed.
        greatest(1, (peak_month_need_num + need_den * microseconds_per_month - 1) // (need_den * microseconds_per_month),
            (month_need_num + need_den * microseconds_per_month - 1) // (need_den * microseconds_per_month))::hugeint
            as replicas
    from hours
),

billed as (
    select
        *,
        -- ceil(a / b) of positive integers is (a + b - 1) // b: exact, whatever the size.
        case
            when need_num is null then null
            -- Sustained demand on always-on capacity: every copy for every month of the period (at
            -- least the minimum term), or every commitment term the period needs.
            when is_always_on and is_billed_monthly then replicas * greatest(period_months::hugeint,
                (min_term_us + microseconds_per_month - 1) // microseconds_per_month)
            when is_always_on then replicas * greatest(1, (period_months * microseconds_per_month + commitment_term_us - 1)
                // commitment_term_us)
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
    from replicas
),

final as (
    select
        *,
        case
            when billing_periods is null then null
            when is_billed_monthly then billing_periods * seconds_per_month
            when is_always_on then billing_periods * ceil(commitment_term_hours * 3600)
            when commitment_term_hours is not null
                then greatest(billing_periods * ceil(commitment_term_hours * 3600), ceil(min_term_hours * 3600))
            else greatest(billing_periods * billing_granularity_s, ceil(min_term_hours * 3600))
        end::hugeint as billed_s
    from billed
)

select * from final
