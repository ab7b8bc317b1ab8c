-- One row per workload × current offer (billing option) × throughput source, at the workload's
-- declared utilisation: hours needed and billed, every cost line, total and cost per completed
-- unit — or the reasons the configuration is excluded. Estimated rows are labelled (status
-- 'estimated', throughput_source 'estimate') and never ranked with measured ones.
with cost_lines as (
    -- The cost lines as of this refresh (their clock columns and status joined on).
    select * from ({{ workload_cost_lines_now() }}) where utilisation_scenario = 'declared'
),

compared as (
    select
        *,
        -- A spot price above the same provider's on-demand price for the same configuration is
        -- a warning (the discount spot trades for interruptions is missing: a stale or mislabelled price).
        case when billing_model = 'spot' and usd_per_node_hour > on_demand_usd_per_node_hour
            then list_append(offer_warnings, 'SPOT_ABOVE_ON_DEMAND') else offer_warnings end as all_warnings
    from cost_lines
),

named as (
    -- A configuration id a user can copy from `rank` into `explain WORKLOAD CONFIG`:
    -- provider/gpu_model/gpu_count/billing_model[/tier][/<term>h], plus /offer_id only where one
    -- source lists two offers with the same key (e.g. two regions).
    select
        *,
        concat_ws('/', provider, gpu_model, gpu_count::varchar, billing_model, tier,
            round(commitment_term_hours)::bigint::varchar || 'h') as base_config_id
    from compared
),

shared_config_ids as (
    -- The base ids two offers share within a workload and throughput source: an aggregate over
    -- narrow columns (a window over the million wide rows sorted all of them: most of this model's time).
    select workload_id, throughput_source, base_config_id
    from named
    group by all
    having min(offer_id) != max(offer_id)
),

configs as (
    select
        n.* exclude (base_config_id),
        n.base_config_id || case when s.base_config_id is not null then '/' || n.offer_id else '' end as config_id
    from named as n
    left join shared_config_ids as s
        on s.workload_id = n.workload_id and s.throughput_source = n.throughput_source
        and s.base_config_id = n.base_config_id
),

flagged as (
    -- The risks a buyer weighs at the decision, as short flags for `rank` (the full sentences are in
    -- risk_notes): computed here so the CLI only filters and prints (docs/cost-model.md#risk-flags).
    select
        *,
        -- Whole days between the quote's observation and this refresh; null when the quote states no
        -- date (its observed_at is only when the file landed).
        case when observed_at_basis != 'landed_at'
            then datediff('day', observed_at, (select refreshed_at from {{ source('raw', 'refresh') }})) end as quote_age_days
    from configs
),

risk_flagged as (
    select
        *,
        list_filter([
            case when is_interruptible then 'spot' end,
            case when list_contains(offer_warnings, 'PRICE_OUTLIER') then 'price outlier' end,
            case when list_contains(all_warnings, 'SPOT_ABOVE_ON_DEMAND') then 'spot > on-demand' end,
            case when quote_age_days is null then 'undated' else format('{}d old', quote_age_days) end,
            case when validation_verdict is null then 'unvalidated'
                when validation_verdict != 'pass' then 'validation ' || validation_verdict end,
            case when throughput_source = 'estimate' then 'estimate' end,
            case when node_count > 1 then format('{} nodes', node_count) end
        ], lambda f: f is not null) as risk_flags
    from flagged
),

final as (
    select
        workload_id, offer_id, provider, gpu_model, gpu_count, billing_model,
        usd_per_gpu_hour, usd_per_node_hour,
        unit, quantity, units_per_hour, benchmark_runs, benchmark_run_ids,
        hours_needed, hours_billed, billing_granularity, min_term_hours,
        compute_cost_usd, storage_cost_usd, egress_cost_usd, licence_cost_usd,
        setup_cost_usd, support_cost_usd, total_cost_usd,
        cost_per_unit_usd,
        status,
        exclusion_reasons,
        observed_at, is_stale, source_name,
        memory_fits, min_gpus, compat_verdict, compat_reasons,
        validation_id, validation_verdict,
        tier, commitment_term_hours,
        -- Added by the billing-aware cost model (docs/cost-model.md).
        gpus_per_node, node_count, throughput_source, estimate_basis,
        utilisation_applied as utilisation, busy_hours, billing_period, billing_periods, billed_seconds,
        usd_per_node_month, cost_per_million_units_usd, is_interruptible, risk_notes,
        -- Added by benchmark matching (engine, shape, SLOs; docs/cost-model.md).
        benchmark_node_count, benchmark_match_detail,
        -- Cross-source de-duplication: the other sources that list the same offer (docs/cost-model.md).
        also_seen_in,
        config_id,
        -- Added for the buyer's view (docs/cost-model.md#risk-flags; docs/warehouse.md): the GPU's
        -- vendor, the offer's warnings, the quote's age and the short risk flags `rank` prints.
        vendor, all_warnings as warnings, quote_age_days, risk_flags,
        -- Added for deadlines and sustained demand (docs/workloads.md; docs/cost-model.md).
        demand_kind, deadline_hours, period_months, busy_hours_per_month, nodes_for_peak, nodes_rented,
        node_utilisation, cost_per_month_usd, on_demand_usd_per_node_hour, break_even_utilisation
    from risk_flagged
)

select * from final
