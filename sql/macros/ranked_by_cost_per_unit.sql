{# The configurations of one status (ranked: measured throughput; estimated) numbered by cost per
   completed unit within their workload, with the columns rankings and estimate_rankings show. One
   definition for both marts, so a measured and an estimated rank are always counted the same way. #}
{% macro ranked_by_cost_per_unit(status) %}
    select
        workload_id,
        status,
        row_number() over (
            partition by workload_id
            -- Cheapest first; ties by total, then the option's key, so the order never depends on the engine.
            order by cost_per_unit_usd, total_cost_usd, provider, offer_id, billing_model,
                tier nulls first, commitment_term_hours nulls first, source_name
        ) as rank,
        offer_id, provider, gpu_model, gpu_count, billing_model,
        cost_per_unit_usd, total_cost_usd, hours_billed, hours_needed,
        usd_per_gpu_hour, usd_per_node_hour, unit, quantity,
        benchmark_run_ids, observed_at as quote_observed_at, source_name,
        validation_id, validation_verdict,
        tier, commitment_term_hours,
        node_count, throughput_source, cost_per_million_units_usd, is_interruptible, utilisation,
        estimate_basis, also_seen_in, config_id,
        vendor, risk_notes, warnings, quote_age_days, risk_flags,
        demand_kind, deadline_hours, period_months, busy_hours_per_month, nodes_for_peak, nodes_rented,
        node_utilisation, cost_per_month_usd, on_demand_usd_per_node_hour, break_even_utilisation
    from {{ ref('workload_costs') }}
    where status = '{{ status }}'
{% endmacro %}
