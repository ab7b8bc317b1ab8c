-- The current view holds one row per source × provider × offer × billing option.
select source_name, provider, offer_id, billing_model, tier, commitment_term_hours, count(*) as rows
from {{ ref('offers') }}
group by all
having count(*) > 1
