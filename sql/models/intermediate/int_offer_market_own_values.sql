-- One row per option judged against the market (priced > 0, not hypothetical) and the market price
-- it leaves out as its own (value_id): itself, or (listed by a source that lost the key) the winning
-- source's offer of that key with the same offer id, else its first by offer id.
-- Ephemeral: a step of int_offer_market_peers (inlined there as a CTE); a table of its own would cost a
-- dbt node per build for a few rows.
{{ config(materialized='ephemeral') }}

with market_candidates as (
    select * from {{ ref('int_offer_market_options') }} where usd_per_gpu_hour > 0 and not is_hypothetical
),

market_values as (
    select * from {{ ref('int_offer_market_values') }}
)

-- Equi-joins only: one key can hold 50,000 offers of one marketplace.
select option_id, option_id as value_id from market_values
union all
select c.option_id, coalesce(same.option_id, first.option_id)
from market_candidates as c
left join market_values as own on own.option_id = c.option_id
left join market_values as same on same.market_key = c.market_key and same.offer_id = c.offer_id
left join (
    select market_key, arg_min(option_id, (offer_id, option_id)) as option_id from market_values group by all
) as first on first.market_key = c.market_key
where own.option_id is null
