-- One row per configuration (int_workload_configurations) × utilisation scenario (the workload's
-- declared utilisation, and 30 / 60 / 100 % for sensitivity): hours needed and billed, every cost
-- line (exact to the micro-dollar), the total, cost per completed unit, status and every exclusion reason.
-- Conventions (docs/cost-model.md): 730 h per month; each line rounded half-up to 6 decimals; billed
-- periods from exact integer arithmetic (docs/cost-model.md#exact-billing).
with configurations as (
    select * from {{ ref('int_workload_configurations') }}
),

workloads as (
    select workload_id, utilisation from {{ ref('stg_workloads') }}
),

scenarios as (
    select workload_id, 'declared' as utilisation_scenario, utilisation::decimal(9, 6) as utilisation_applied
    from workloads
    union all
    select w.workload_id, s.label, s.u::decimal(9, 6)
    from workloads as w
    cross join (values ('30pct', 0.3), ('60pct', 0.6), ('100pct', 1.0)) as s(label, u)
),

rates as (
    select
        c.*,
        s.utilisation_scenario,
        s.utilisation_applied,
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
                (need_num + need_den * 2628000000000 - 1) // (need_den * 2628000000000),
                (min_term_us + 2628000000000 - 1) // 2628000000000, 1)
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

billed_seconds as (
    select
        *,
        case
            when billing_periods is null then null
            when is_billed_monthly then billing_periods * 2628000
            when commitment_term_hours is not null
                then greatest(billing_periods * ceil(commitment_term_hours * 3600), ceil(min_term_hours * 3600))
            else greatest(billing_periods * billing_granularity_s, ceil(min_term_hours * 3600))
        end::hugeint as billed_s
    from billed
),

lines as (
    select
        *,
        -- Exact integer arithmetic in micro-dollars, rounded half-up to the micro-dollar (values are ≥ 0).
        case
            when is_billed_monthly and usd_per_node_month is not null
                then round(node_count * (billed_s // 2628000) * usd_per_node_month, 6)
            else ((node_count * billed_s * (usd_per_node_hour * 1000000)::hugeint + 1800) // 3600) * 0.000001
        end::decimal(38, 6) as compute_cost_usd,
        (((storage_gb * 1000000)::hugeint * (storage_usd_per_gb_month * 1000000)::hugeint * billed_s
            + 1314000000000) // 2628000000000 * 0.000001)::decimal(38, 6) as storage_cost_usd,
        round(egress_gb * egress_usd_per_gb, 6)::decimal(38, 6) as egress_cost_usd,
        ((node_count * billed_s * (licence_usd_per_hour * 1000000)::hugeint + 1800) // 3600
            * 0.000001)::decimal(38, 6) as licence_cost_usd,
        round(node_count * setup_fee_usd, 6)::decimal(38, 6) as setup_cost_usd,
        -- Support is billed per node per month started (730 h).
        round(node_count * support_usd_per_month * ((billed_s + 2627999) // 2628000), 6)::decimal(38, 6)
            as support_cost_usd
    from billed_seconds
),

totals as (
    select
        *,
        (compute_cost_usd + storage_cost_usd + egress_cost_usd + licence_cost_usd + setup_cost_usd
            + support_cost_usd)::decimal(38, 6) as total_cost_usd,
        list_filter([
            -- Runs that match in every way but the SLOs: SLO_NOT_MET; no run at all (or only mismatched ones): NO_BENCHMARK.
            case when units_per_hour is null then case when is_slo_not_met then 'SLO_NOT_MET'
                when is_perf_implausible then 'PERF_IMPLAUSIBLE' else 'NO_BENCHMARK' end end,
            case when not is_duration_in_range then 'DURATION_OUT_OF_RANGE' end,
            case when stale_reason is not null then stale_reason end,
            case when usd_per_node_hour is null then 'FX_RATE_MISSING' end,
            case when memory_fits = false then 'DOES_NOT_FIT' end,
            case when precision_supported = false then 'PRECISION_UNSUPPORTED' end,
            -- An unknown stack stays rankable; compat_verdict shows it.
            case when compat_verdict = 'unsupported' then 'ROCM_UNSUPPORTED' end,
            case when validation_verdict = 'fail' then 'VALIDATION_FAILED' end,
            scope_reason,
            price_band_reason
        ], lambda r: r is not null) as exclusion_reasons
    from lines
),

final as (
    select
        * exclude (units_per_hour, rate_scale, is_duration_in_range, rate_mantissa, rate_pow10, busy_us,
            utilisation_ppm, setup_us, min_term_us, commitment_term_us, need_num, need_den, billed_s),
        -- The rate the arithmetic used (m × 10^-k), to 18 decimals.
        format('{}e{}', rate_mantissa, -rate_scale)::decimal(38, 18) as units_per_hour,
        -- Exact hours, rounded half-up to the micro-hour for display.
        ((2 * busy_us + 3600) // 7200 * 0.000001)::decimal(38, 6) as busy_hours,
        ((2 * need_num + need_den * 3600) // (2 * need_den * 3600) * 0.000001)::decimal(38, 6) as hours_needed,
        ((2 * billed_s * 1000000 + 3600) // 7200 * 0.000001)::decimal(38, 6) as hours_billed,
        billed_s as billed_seconds,
        -- total / quantity, rounded half-up in integers (a DECIMAL division would be a DOUBLE one).
        ((2 * (total_cost_usd * 1000000)::hugeint * 1000000000000 + (quantity * 1000000)::hugeint)
            // (2 * (quantity * 1000000)::hugeint) * 0.000000000001)::decimal(38, 12) as cost_per_unit_usd,
        ((2 * (total_cost_usd * 1000000)::hugeint * 1000000000000 + (quantity * 1000000)::hugeint)
            // (2 * (quantity * 1000000)::hugeint) * 0.000001)::decimal(38, 6) as cost_per_million_units_usd,
        case
            when len(exclusion_reasons) > 0 then 'excluded'
            when throughput_source = 'estimate' then 'estimated'
            else 'ranked'
        end as status,
        billing_model = 'spot' as is_interruptible,
        list_filter([
            case when billing_model = 'spot'
                then 'SPOT_INTERRUPTION_RISK: the provider may reclaim the node; no discount for lost work is applied' end,
            case when throughput_source = 'estimate'
                then 'ESTIMATED_THROUGHPUT: ' || estimate_basis end,
            case when list_contains(offer_warnings, 'PRICE_OUTLIER')
                then 'PRICE_OUTLIER: ' || scope_detail || '; confirm the price with the provider' end,
            case when list_contains(offer_warnings, 'OBSERVED_AT_UNKNOWN')
                then 'OBSERVED_AT_UNKNOWN: the quote states no observation date (row, file or sources.yaml defaults.observed_at); its age is unknown' end,
            case when node_count > 1 and benchmark_node_count is null
                then format('MULTI_NODE: {} nodes; throughput from runs on {} GPUs in total that do not state their node count', node_count, gpu_count)
                when node_count > 1
                then format('MULTI_NODE: {} nodes; throughput from runs on {} nodes, {} GPUs in total', node_count, benchmark_node_count, gpu_count) end
        ], lambda r: r is not null) as risk_notes
    from totals
    -- An estimate is offered only where nothing but a benchmark is missing.
    where throughput_source = 'measured' or len(exclusion_reasons) = 0
)

select * from final
