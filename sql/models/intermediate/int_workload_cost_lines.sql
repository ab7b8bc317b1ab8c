-- One row per configuration (int_workload_configurations) × utilisation scenario (the workload's
-- declared utilisation, and 30 / 60 / 100 % for sensitivity): hours needed and billed, every cost
-- line (exact to the micro-dollar), the total, cost per completed unit, status and every exclusion reason.
-- Conventions (docs/cost-model.md, data/reference/conventions.csv): 730 h per month; each line rounded
-- half-up to 6 decimals; billed periods from exact integer arithmetic (int_workload_billed_time;
-- docs/cost-model.md#exact-billing).
-- Incremental per offer option (macros/workload_cost_incremental.sql): the lines of options whose
-- costed inputs did not change stay; no clock column is here (observed_at, staleness and the status
-- they decide join on in workload_cost_lines_now, which every reader of these lines goes through).
{{ config(materialized='incremental', incremental_strategy='append',
          pre_hook="{{ delete_recosted_options() }}") }}
-- depends_on: {{ ref('int_workload_configurations') }}

with on_demand as (
    -- What spot, monthly and committed prices of the same configuration are compared with.
    {{ on_demand_prices() }}
),

all_billed_time as not materialized (
    -- Not materialized: the step below reads only the narrow columns the deadline needs.
    select
        *,
        -- A deadline is met when the hours needed (busy / utilisation + setup) are at most deadline_hours.
        case when demand_kind = 'deadline' and need_num is not null then need_num <= deadline_us * need_den end
            as meets_deadline
    from {{ ref('int_workload_billed_time') }}
),

chosen_nodes as (
    -- A deadline workload's candidates (int_shape_configurations): the fewest nodes that meet the
    -- deadline; where none does, the most nodes a run measured (the closest it gets), DEADLINE_NOT_MET.
    -- An aggregate over narrow columns: a window over the wide rows sorted all 4M of them.
    select
        workload_id, offer_option_id, throughput_source, utilisation_scenario,
        coalesce(min(node_count) filter (where meets_deadline), max(node_count)) as node_count
    from all_billed_time
    where demand_kind = 'deadline'
    group by all
),

billed_time as (
    -- Only a deadline workload has more than one node count to choose from (int_shape_configurations'
    -- deadline_candidates; sql/tests/assert_one_node_count_unless_deadline.sql): every other
    -- configuration passes straight through. At SCALE=default (4M rows) this model took 90 s alone
    -- with every row joined to its choice, 38 s with the others passed through (same rows).
    select * from all_billed_time where demand_kind is distinct from 'deadline'
    union all
    select b.*
    from all_billed_time as b
    semi join chosen_nodes as n
        on n.workload_id is not distinct from b.workload_id
        and n.offer_option_id is not distinct from b.offer_option_id
        and n.throughput_source is not distinct from b.throughput_source
        and n.utilisation_scenario is not distinct from b.utilisation_scenario
        and n.node_count = b.node_count
    where b.demand_kind = 'deadline'
),

compared as (
    select
        b.*,
        od.on_demand_usd_per_node_hour,
        -- The utilisation above which paying for the whole month (or the whole committed term)
        -- beats paying on-demand for busy hours only: monthly price / (on-demand × hours per month),
        -- or committed hourly / on-demand hourly. Rounded half-up to 0.0001.
        case
            when b.billing_model in ('monthly', 'dedicated') and b.usd_per_node_month is not null then
                ((2 * (b.usd_per_node_month * 1000000)::hugeint * 10000
                    + (od.on_demand_usd_per_node_hour * 1000000)::hugeint * b.hours_per_month)
                 // (2 * (od.on_demand_usd_per_node_hour * 1000000)::hugeint * b.hours_per_month) * 0.0001)
            when b.commitment_term_hours is not null or b.billing_model = 'reserved' then
                ((2 * (b.usd_per_node_hour * 1000000)::hugeint * 10000 + (od.on_demand_usd_per_node_hour * 1000000)::hugeint)
                 // (2 * (od.on_demand_usd_per_node_hour * 1000000)::hugeint) * 0.0001)
        end::decimal(18, 4) as break_even_utilisation
    from billed_time as b
    left join on_demand as od
        on od.provider = b.provider and od.gpu_model = b.gpu_model and od.gpus_per_node = b.gpus_per_node
),

lines as (
    select
        *,
        -- Exact integer arithmetic in micro-dollars, rounded half-up to the micro-dollar (values are ≥ 0).
        case
            when is_billed_monthly and usd_per_node_month is not null
                then round(node_count * (billed_s // seconds_per_month) * usd_per_node_month, 6)
            else ((node_count * billed_s * (usd_per_node_hour * 1000000)::hugeint + 1800) // 3600) * 0.000001
        end::decimal(38, 6) as compute_cost_usd,
        (((storage_gb * 1000000)::hugeint * (storage_usd_per_gb_month * 1000000)::hugeint * billed_s
            + microseconds_per_month // 2) // microseconds_per_month * 0.000001)::decimal(38, 6) as storage_cost_usd,
        round(egress_gb * egress_usd_per_gb, 6)::decimal(38, 6) as egress_cost_usd,
        ((node_count * billed_s * (licence_usd_per_hour * 1000000)::hugeint + 1800) // 3600
            * 0.000001)::decimal(38, 6) as licence_cost_usd,
        round(node_count * setup_fee_usd, 6)::decimal(38, 6) as setup_cost_usd,
        -- Support is billed per node per month started (730 h).
        round(node_count * support_usd_per_month * ((billed_s + seconds_per_month - 1) // seconds_per_month), 6)::decimal(38, 6)
            as support_cost_usd
    from compared
),

totals as (
    select
        *,
        (compute_cost_usd + storage_cost_usd + egress_cost_usd + licence_cost_usd + setup_cost_usd
            + support_cost_usd)::decimal(38, 6) as total_cost_usd,
        -- Every exclusion reason but the quote's staleness, which follows the clock: it goes between
        -- the two lists (workload_cost_lines_now), where it always stood.
        list_filter([
            -- Runs that match in every way but the SLOs: SLO_NOT_MET; no run at all (or only mismatched ones): NO_BENCHMARK.
            case when units_per_hour is null then case when is_slo_not_met then 'SLO_NOT_MET'
                when is_perf_implausible then 'PERF_IMPLAUSIBLE' else 'NO_BENCHMARK' end end,
            case when not is_duration_in_range then 'DURATION_OUT_OF_RANGE' end,
            case when meets_deadline = false then 'DEADLINE_NOT_MET' end
        ], lambda r: r is not null) as reasons_before_stale,
        list_filter([
            case when usd_per_node_hour is null then 'FX_RATE_MISSING' end,
            case when memory_fits = false then 'DOES_NOT_FIT' end,
            case when precision_supported = false then 'PRECISION_UNSUPPORTED' end,
            -- An unknown stack stays rankable; compat_verdict shows it.
            case when compat_verdict = 'unsupported' then 'ROCM_UNSUPPORTED' end,
            case when validation_verdict = 'fail' then 'VALIDATION_FAILED' end,
            scope_reason,
            price_band_reason
        ], lambda r: r is not null) as reasons_after_stale
    from lines
),

final as (
    select
        * exclude (units_per_hour, rate_scale, is_duration_in_range, rate_mantissa, rate_pow10, busy_us,
            utilisation_ppm, setup_us, min_term_us, commitment_term_us, need_num, need_den, billed_s,
            seconds_per_month, microseconds_per_month, hours_per_month, busy_month_us, busy_peak_month_us,
            month_quantity, peak_month_quantity, surviving_ppt, busy_scale, month_need_num, peak_month_need_num,
            deadline_us, replicas),
        -- Sustained demand (docs/workloads.md): one copy's busy hours per month, the nodes the peak
        -- (else the monthly volume) needs at once, the nodes paid for (always-on capacity: every
        -- month; otherwise only busy hours are billed), and the cost per month of the period.
        case when demand_kind = 'sustained' then
            ((2 * busy_month_us + 3600) // 7200 * 0.000001)::decimal(38, 6) end as busy_hours_per_month,
        case when demand_kind = 'sustained' then (node_count * greatest(1,
            (peak_month_need_num + need_den * microseconds_per_month - 1) // (need_den * microseconds_per_month)))::bigint
        end as nodes_for_peak,
        case when demand_kind = 'sustained' and is_always_on then (node_count * replicas)::bigint end as nodes_rented,
        -- Share of the always-on nodes' hours doing useful work: monthly beats on-demand above the
        -- offer's break_even_utilisation (workload_costs). Rounded half-up to 0.0001.
        case when demand_kind = 'sustained' and is_always_on then
            ((2 * month_need_num * 10000 + need_den * microseconds_per_month * replicas)
                // (2 * need_den * microseconds_per_month * replicas) * 0.0001)::decimal(9, 4)
        end as node_utilisation,
        -- The rate the arithmetic used (m × 10^-k), to 18 decimals (half-up below 10^-18), in
        -- integers: casting the text 'me-k' to DECIMAL took ~130 µs a row (≈ 95 % of this model).
        (case
            when rate_scale < 0 then rate_mantissa * rate_pow10 * 1000000000000000000::hugeint
            when rate_scale <= 18 then rate_mantissa * (1000000000000000000::hugeint // rate_pow10)
            else (2 * rate_mantissa + rate_pow10 // 1000000000000000000::hugeint)
                // (2 * (rate_pow10 // 1000000000000000000::hugeint))
        end * 0.000000000000000001)::decimal(38, 18) as units_per_hour,
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
        case when demand_kind = 'sustained' then
            ((2 * (total_cost_usd * 1000000)::hugeint + period_months) // (2 * period_months) * 0.000001)::decimal(38, 6)
        end as cost_per_month_usd,
        billing_model = 'spot' as is_interruptible,
        list_filter([
            case when billing_model = 'spot' and surviving_ppt is not null
                then format('SPOT_INTERRUPTION_RISK: expected cost with lost work redone, from your assumption ({} interruptions/h × {} h lost each; {}): hours needed ÷ (1 − {})',
                    spot_interruptions_per_hour::double, spot_lost_hours_per_interruption::double, spot_assumption_source,
                    (spot_interruptions_per_hour * spot_lost_hours_per_interruption)::double)
                when billing_model = 'spot'
                then 'SPOT_INTERRUPTION_RISK: the provider may reclaim the node; no discount for lost work is applied (give spot_interruptions in workloads.yaml for an expected cost)' end,
            case when meets_deadline = false
                then format('DEADLINE_NOT_MET: {} h needed at the most nodes a run measured ({}), deadline {} h',
                    ((2 * need_num + need_den * 3600) // (2 * need_den * 3600) * 0.000001)::decimal(38, 6), node_count, deadline_hours) end,
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
    -- An estimate is offered only where nothing but a benchmark is missing (and, at the cheap end,
    -- where its quote is not stale).
    where throughput_source = 'measured' or (len(reasons_before_stale) = 0 and len(reasons_after_stale) = 0)
)

select * from final
