-- One row per workload × current offer option × throughput source, at the workload's declared
-- utilisation: the rows of workload_costs (a view of this model, less the three internal columns
-- below) — hours needed and billed, every cost line, total and cost per completed unit, or the
-- reasons the configuration is excluded. Estimated rows are labelled (status 'estimated',
-- throughput_source 'estimate') and never ranked with measured ones.
-- Incremental per offer option (macros/workload_cost_incremental.sql): a build from the published
-- warehouse keeps the rows of options whose costed inputs (costed_inputs_hash) and clock state
-- (clock_state_hash: staleness, other sources, quote age in days) did not change, and checks every
-- config id again after the new rows are in. observed_at is not kept (every scrape moves it, and it
-- decides nothing here): workload_costs joins each option's current one on.
{{ config(materialized='incremental', incremental_strategy='append',
          pre_hook="{{ delete_changed_workload_costs() }}",
          post_hook="{{ update_workload_config_ids() }}") }}
-- depends_on: {{ ref('int_workloads') }} {{ ref('int_shape_measured_throughputs') }}
-- depends_on: {{ ref('int_shape_estimated_throughputs') }} {{ ref('int_compat_checks') }}
-- depends_on: {{ ref('int_latest_validations') }} {{ ref('int_utilisation_scenarios') }} {{ ref('stg_conventions') }}

with cost_lines as (
    -- The cost lines as of this refresh (their clock columns and status joined on), of the options
    -- this build costs: every option in a full build, the new and changed ones in an incremental one.
    select c.*, s.quote_age_days, s.clock_state_hash
    from ({{ workload_cost_lines_now(options_not_costed_yet()) }}) as c
    join ({{ option_clock_states() }}) as s using (offer_option_id)
    where c.utilisation_scenario = 'declared' and {{ costed_option_is_new('c') }}
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

configs as (
    -- config_id (workload_config_ids): among this build's rows here; the post-hook checks every id again.
    select c.*, i.config_id
    from compared as c
    join ({{ workload_config_ids('compared') }}) as i using (workload_id, throughput_source, offer_option_id)
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
    from configs
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
        null::timestamptz as observed_at, is_stale, source_name,
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
        node_utilisation, cost_per_month_usd, on_demand_usd_per_node_hour, break_even_utilisation,
        -- Internal (not in workload_costs): the option and the two states an incremental build compares.
        offer_option_id, costed_inputs_hash, clock_state_hash
    from risk_flagged
)

select * from final
