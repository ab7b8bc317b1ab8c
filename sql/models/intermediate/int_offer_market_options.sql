-- One row per current offer × billing option (int_quote_latest), numbered (option_id), with the
-- cross-source key its market price is counted once under and whether its price is hypothetical
-- (notes starting "hypothetical", seed 000's example): no market price (docs/cost-model.md).
select
    *,
    row_number() over (order by source_name, provider, offer_id, billing_model, tier,
        commitment_term_hours) as option_id,
    -- The same offer in every source that lists it: the cross-source key the cost model uses.
    cross_source_option_id as market_key,
    coalesce(regexp_matches(notes, '^\s*hypothetical\b', 'i'), false) as is_hypothetical
from {{ ref('int_quote_latest') }}
