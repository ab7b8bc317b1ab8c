-- Every kept cost row and rank is of a current offer option: the public views join each one's
-- observed_at on (a row whose option is gone would read as undated instead of being recosted).
select 'int_workload_costs' as model, workload_id, offer_option_id
from {{ ref('int_workload_costs') }}
where offer_option_id not in (select offer_option_id from {{ ref('int_offers_now') }})
union all
select 'int_workload_ranks', workload_id, offer_option_id
from {{ ref('int_workload_ranks') }}
where offer_option_id not in (select offer_option_id from {{ ref('int_offers_now') }})
