-- One row per market price: a current option priced > 0 and not hypothetical, one per offer rather
-- than per source (for each cross-source key, the options of the source the cost model costs it from).
with market_candidates as (
    select * from {{ ref('int_offer_market_options') }} where usd_per_gpu_hour > 0 and not is_hypothetical
)

-- The winning source per key: latest observation, a dated one first; ties: source.
select c.*
from market_candidates as c
join (
    select market_key, source_name from market_candidates
    qualify row_number() over (partition by market_key
        order by observed_at_basis != 'landed_at' desc, observed_at desc, source_name) = 1
) as w using (market_key, source_name)
