-- One row per offer option the cost model costs: a priced current offer, from the source that
-- observed it last when several sources list the same option (cross_source_option_id), with the
-- other sources as evidence (also_seen_in) and its stated monthly price per node in USD.
with offers_priced as (
    -- A pending quote carries no price yet: there is nothing to cost.
    select * from {{ ref('int_offers') }} where price_amount is not null
),

fx as (
    select currency, usd_per_unit::decimal(38, 9) as usd_per_unit, rate_date::date as rate_date
    from {{ source('ref', 'fx_rates') }}
),

source_observations as (
    -- Each source's newest observation of an option; a dated one first (undated = landed_at).
    select
        cross_source_option_id, source_name,
        bool_or(observed_at_basis != 'landed_at') as is_dated,
        coalesce(max(observed_at) filter (where observed_at_basis != 'landed_at'), max(observed_at))
            as latest_observed_at,
        list(distinct offer_id order by offer_id) as offer_ids
    from offers_priced
    group by all
),

source_ranks as (
    -- The same offer seen in several sources is costed once: the latest observation wins (ties: the
    -- source name), so a catalog fetched today beats a price point noted last year. An undated one
    -- (its observed_at is only when the file landed) never beats a dated one (docs/inputs.md).
    select
        *,
        row_number() over (
            partition by cross_source_option_id
            order by is_dated desc, latest_observed_at desc, source_name
        ) as source_rank
    from source_observations
),

seen_elsewhere as (
    -- The sources that lost, kept as evidence on the winner.
    select
        cross_source_option_id,
        list(format('{} ({}, {} {})', source_name, array_to_string(offer_ids, ', '),
                case when is_dated then 'observed' else 'undated, landed' end,
                strftime(latest_observed_at, '%Y-%m-%d'))
            order by is_dated desc, latest_observed_at desc, source_name) as also_seen_in
    from source_ranks
    where source_rank > 1
    group by all
),

final as (
    select
        o.*,
        coalesce(e.also_seen_in, []) as also_seen_in,
        -- A monthly price is billed as the provider states it, not via its rounded hourly equivalent.
        case when o.price_unit = 'month' then (o.price_amount * fx.usd_per_unit
            * case when o.price_scope = 'per_gpu' then o.gpus_per_node else 1 end)::decimal(38, 9)
        end as usd_per_node_month
    from offers_priced as o
    join source_ranks as r
        on r.cross_source_option_id = o.cross_source_option_id and r.source_name = o.source_name
        and r.source_rank = 1
    left join seen_elsewhere as e on e.cross_source_option_id = o.cross_source_option_id
    left join fx on fx.currency = o.currency and fx.rate_date = o.fx_rate_date
)

select * from final
