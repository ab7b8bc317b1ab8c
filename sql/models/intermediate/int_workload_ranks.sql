-- One row per workload × configuration with status ranked (measured and feasible) or estimated,
-- numbered by cost per completed unit within its workload and status (1 = cheapest): the rows of
-- rankings (ranked) and estimate_rankings (estimated), views of this model that join on each
-- quote's current observed_at. One definition for both, so a measured and an estimated rank are
-- always counted the same way.
-- Incremental per workload (macros/ranking_incremental.sql): a build from the published warehouse
-- keeps the ranks of workloads whose cost rows did not change (ranking_inputs_hash).
{{ config(materialized='incremental', incremental_strategy='append',
          pre_hook="{{ delete_reranked_workloads() }}") }}

with costs as (
    select c.*, f.ranking_inputs_hash
    from {{ ref('int_workload_costs') }} as c
    join ({{ workload_ranking_fingerprints() }}) as f using (workload_id)
    where c.status in ('ranked', 'estimated') and {{ workload_is_unranked('c') }}
),

ranked as (
    select
        workload_id,
        status,
        row_number() over (
            partition by workload_id, status
            -- Cheapest first; ties by total, then the option's key, so the order never depends on the engine.
            order by cost_per_unit_usd, total_cost_usd, provider, offer_id, billing_model,
                tier nulls first, commitment_term_hours nulls first, source_name
        ) as rank,
        offer_id, provider, gpu_model, gpu_count, billing_model,
        cost_per_unit_usd, total_cost_usd, hours_billed, hours_needed,
        usd_per_gpu_hour, usd_per_node_hour, unit, quantity,
        -- The quote's observed_at is not kept (every scrape moves it): the public views join it on.
        benchmark_run_ids, null::timestamptz as quote_observed_at, source_name,
        validation_id, validation_verdict,
        tier, commitment_term_hours,
        node_count, throughput_source, cost_per_million_units_usd, is_interruptible, utilisation,
        estimate_basis, also_seen_in, config_id,
        vendor, risk_notes, warnings, quote_age_days, risk_flags,
        demand_kind, deadline_hours, period_months, busy_hours_per_month, nodes_for_peak, nodes_rented,
        node_utilisation, cost_per_month_usd, on_demand_usd_per_node_hour, break_even_utilisation,
        -- Internal (not in the public views): the option, and the workload's fingerprint.
        offer_option_id, ranking_inputs_hash
    from costs
)

select * from ranked
