-- One row per offer × billing option (billing model, tier, commitment term) as it stands now: the
-- latest observation of each, flagged when stale, pending (requested, no price yet), when its price
-- scope looks mistaken or its price is an outlier, with seed 000's procurement checklist.
select * exclude (offer_option_id, cross_source_option_id) from {{ ref('int_offers') }}
