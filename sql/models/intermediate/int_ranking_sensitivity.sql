-- One row per workload × ranked configuration: the break-even price at which a challenger would
-- overtake the leader (for the leader: the price at which the runner-up would overtake it), and
-- the configuration's rank and cost per completed unit at 30 / 60 / 100 % utilisation.
-- The rows of ranking_sensitivity (a view of this model, less inputs_hash). Rebuilt only when one of
-- its inputs changed (sensitivity_inputs: every option's costed inputs, staleness and key; a scrape
-- that changes no price changes none): the rows carry the inputs' hash (macros/workload_cost_incremental.sql).
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
with costs as (
    -- The configurations rankings ranks, with every cost line (workload_costs is these rows).
    select * from ({{ workload_cost_lines_now() }})
    where utilisation_scenario = 'declared' and status = 'ranked' and {{ inputs_changed() }}
),

pivoted as (
    select * from {{ ref('int_sensitivity_ranks') }}
),

ranked as (
    select c.*, p.rank_at_declared as rank
    from costs as c
    join pivoted as p on p.workload_id = c.workload_id and p.offer_option_id = c.offer_option_id
),

joined as (
    select
        r.*,
        -- Only the compute line moves with the price; the other lines stay as they are.
        r.total_cost_usd - r.compute_cost_usd as other_cost_usd,
        -- Node-seconds billed (an integer): break-even prices divide by it in exact integers, not floats.
        r.node_count * r.billed_seconds as node_seconds_billed,
        -- Monthly / dedicated offers are billed in whole node-months at the stated monthly price.
        case when r.billing_period = 'month' and r.usd_per_node_month is not null
            then r.node_count * r.billing_periods end as node_months_billed,
        first_value(r.offer_id) over w as leader_offer_id,
        first_value(r.total_cost_usd) over w as leader_total_cost_usd,
        nth_value(r.offer_id, 2) over w as runner_up_offer_id,
        nth_value(r.total_cost_usd, 2) over w as runner_up_total_cost_usd
    from ranked as r
    window w as (partition by r.workload_id order by r.rank
        rows between unbounded preceding and unbounded following)
),

break_even as (
    select
        *,
        case when rank = 1 then runner_up_offer_id else leader_offer_id end as compared_with_offer_id,
        case when rank = 1 then runner_up_total_cost_usd else leader_total_cost_usd end
            as compared_with_total_cost_usd
    from joined
),

margins as (
    select
        *,
        -- What the compute line may cost at most, in micro-dollars (an exact integer).
        ((compared_with_total_cost_usd - other_cost_usd) * 1000000)::hugeint as margin_micro_usd,
        (usd_per_node_hour * 1000000)::hugeint as node_hour_micro_usd
    from break_even
),

final as (
    select
        b.workload_id, b.rank, b.offer_id, b.provider, b.source_name, b.gpu_model, b.gpu_count,
        b.node_count, b.billing_model, b.tier, b.commitment_term_hours,
        b.usd_per_gpu_hour, b.usd_per_node_hour, b.total_cost_usd, b.cost_per_unit_usd,
        b.compared_with_offer_id, b.compared_with_total_cost_usd,
        -- Null when there is no one to compare with, or when even a free node would not be enough.
        -- margin / node-hours billed, rounded half-up to the micro-dollar: (2a + b) // 2b in integers.
        case when b.margin_micro_usd > 0 then
            ((2 * b.margin_micro_usd * 3600 + b.node_seconds_billed) // (2 * b.node_seconds_billed)
                * 0.000001)::decimal(18, 6)
        end as break_even_usd_per_node_hour,
        case when b.margin_micro_usd > 0 then
            ((2 * b.margin_micro_usd * 3600 + b.node_seconds_billed * b.gpus_per_node)
                // (2 * b.node_seconds_billed * b.gpus_per_node) * 0.000001)::decimal(18, 6)
        end as break_even_usd_per_gpu_hour,
        -- (break-even / current price − 1) × 100, rounded half away from zero to 0.01 %.
        case when b.margin_micro_usd > 0 and b.node_hour_micro_usd > 0 then
            (sign(b.margin_micro_usd * 3600 - b.node_seconds_billed * b.node_hour_micro_usd)
                * ((2 * abs(b.margin_micro_usd * 3600 - b.node_seconds_billed * b.node_hour_micro_usd) * 10000
                    + b.node_seconds_billed * b.node_hour_micro_usd)
                   // (2 * b.node_seconds_billed * b.node_hour_micro_usd)) * 0.01)::decimal(18, 2)
        end as break_even_change_pct,
        p.rank_at_30pct, p.rank_at_60pct, p.rank_at_100pct,
        p.cost_per_unit_usd_at_30pct, p.cost_per_unit_usd_at_60pct, p.cost_per_unit_usd_at_100pct,
        -- Monthly / dedicated offers: the same break-even as a price per node-month and GPU-month
        -- (whole months billed at the stated monthly price); null for other billing.
        b.usd_per_node_month,
        case when b.margin_micro_usd > 0 and b.node_months_billed > 0 then
            ((2 * b.margin_micro_usd + b.node_months_billed * 10000) // (2 * b.node_months_billed * 10000)
                * 0.01)::decimal(18, 2)
        end as break_even_usd_per_node_month,
        case when b.margin_micro_usd > 0 and b.node_months_billed > 0 then
            ((2 * b.margin_micro_usd + b.node_months_billed * b.gpus_per_node * 10000)
                // (2 * b.node_months_billed * b.gpus_per_node * 10000) * 0.01)::decimal(18, 2)
        end as break_even_usd_per_gpu_month,
        -- Monthly / dedicated / committed offers: the utilisation above which they beat the same
        -- provider's on-demand price (as in workload_costs.break_even_utilisation).
        b.break_even_utilisation,
        ({{ inputs_fingerprint(inputs) }}) as inputs_hash
    from margins as b
    left join pivoted as p on p.workload_id = b.workload_id and p.offer_option_id = b.offer_option_id
)

select * from final
{%- endif %}
