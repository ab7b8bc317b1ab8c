-- One row per market price (int_offer_market_values): its rank within its GPU model and billing
-- model, and the group's size, in dollars and in log space: what the leave-one-out medians index.
select
    option_id, gpu_model, billing_model, usd_per_gpu_hour::double as usd,
    ln(usd_per_gpu_hour::double) as ln_usd,
    count(*) over (partition by gpu_model, billing_model) as n,
    -- Tied prices rank by option id: the ranks' values are the same either way, the rows now always too.
    row_number() over (partition by gpu_model, billing_model order by usd_per_gpu_hour, option_id) as rk
from {{ ref('int_offer_market_values') }}
