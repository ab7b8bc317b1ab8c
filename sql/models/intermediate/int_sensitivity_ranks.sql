-- One row per workload × measured configuration (offer option) ranked at some utilisation scenario
-- (int_utilisation_scenarios): its rank at the declared utilisation (as rankings ranks it) and its
-- rank and cost per completed unit when the whole cost model is re-run at 30 / 60 / 100 %, for
-- ranking_sensitivity. Ranked as rankings ranks: cheapest first, ties by the option's key.
-- Rebuilt only when one of its inputs changed (sensitivity_inputs; a scrape that changes no price
-- changes none): the rows carry the inputs' hash (macros/workload_cost_incremental.sql).
{%- set inputs = sensitivity_inputs() %}
{{ config(materialized='incremental', incremental_strategy='append',
          pre_hook="{{ delete_if_inputs_changed(sensitivity_inputs()) }}") }}
-- depends_on: {{ ref('int_workloads') }} {{ ref('int_shape_measured_throughputs') }}
-- depends_on: {{ ref('int_shape_estimated_throughputs') }} {{ ref('int_compat_checks') }}
-- depends_on: {{ ref('int_latest_validations') }} {{ ref('int_utilisation_scenarios') }} {{ ref('stg_conventions') }}
{% if inputs_unchanged(inputs) -%}
-- Its inputs are as they were: its rows stay, this build adds none.
select * from {{ this }} where false
{%- else %}
with scenario_costs as (
    select * from ({{ workload_cost_lines_now() }})
    where status = 'ranked' and throughput_source = 'measured' and {{ inputs_changed() }}
),

option_order as (
    -- The ties' order (the option's key, as rankings orders it) as one integer per option: sorting
    -- two million rows on five text keys was most of this model's time.
    select
        offer_option_id,
        row_number() over (order by provider, offer_id, billing_model, tier nulls first,
            commitment_term_hours nulls first, source_name) as option_order
    from {{ ref('int_offers_now') }}
),

scenario_ranks as (
    select
        c.workload_id, c.offer_option_id, c.utilisation_scenario, c.cost_per_unit_usd,
        row_number() over (
            partition by c.workload_id, c.utilisation_scenario
            order by c.cost_per_unit_usd, c.total_cost_usd, o.option_order
        ) as scenario_rank
    from scenario_costs as c
    join option_order as o using (offer_option_id)
),

final as (
    select
        workload_id, offer_option_id,
        max(scenario_rank) filter (where utilisation_scenario = 'declared') as rank_at_declared,
        -- The public columns name the scenarios (rank_at_30pct …): the labels of conventions.csv's
        -- sensitivity utilisations, as int_utilisation_scenarios writes them.
        max(scenario_rank) filter (where utilisation_scenario = '30pct') as rank_at_30pct,
        max(scenario_rank) filter (where utilisation_scenario = '60pct') as rank_at_60pct,
        max(scenario_rank) filter (where utilisation_scenario = '100pct') as rank_at_100pct,
        max(cost_per_unit_usd) filter (where utilisation_scenario = '30pct') as cost_per_unit_usd_at_30pct,
        max(cost_per_unit_usd) filter (where utilisation_scenario = '60pct') as cost_per_unit_usd_at_60pct,
        max(cost_per_unit_usd) filter (where utilisation_scenario = '100pct') as cost_per_unit_usd_at_100pct
    from scenario_ranks
    group by all
)

select *, ({{ inputs_fingerprint(inputs) }}) as inputs_hash from final
{%- endif %}
