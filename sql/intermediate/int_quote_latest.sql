-- One row per offer × billing option (billing model, tier, commitment term) per source: its latest
-- observation, as every model about the current state of quotes reads it. A dated observation
-- (observed_at_basis other than landed_at) always wins over an undated one, however recent the
-- undated file landed: its observed_at is only when it arrived (docs/inputs.md).
with observations as (
    select *, observed_at_basis != 'landed_at' as is_dated from stg_quote_observations
),

latest_times as (
    -- When each offer was last seen (dated observations first): an aggregate over narrow columns.
    -- Ranking the wide history rows directly sorted all 10M of them (22 s at bench scale); only ties
    -- are ranked below.
    select
        source_name, provider, offer_id, billing_model, tier, commitment_term_hours,
        bool_or(is_dated) as is_dated,
        coalesce(max(observed_at) filter (where is_dated), max(observed_at)) as observed_at
    from observations
    group by all
),

final as (
    select o.* exclude (is_dated)
    from observations as o
    join latest_times as l
        on l.source_name = o.source_name and l.provider = o.provider and l.offer_id = o.offer_id
        and l.billing_model = o.billing_model and l.tier is not distinct from o.tier
        and l.commitment_term_hours is not distinct from o.commitment_term_hours
        and l.observed_at = o.observed_at and l.is_dated = o.is_dated
    -- Seen twice at the same time: the row's own date before a source default, then the first file
    -- (by hash) and row, as before.
    qualify row_number() over (
        partition by o.source_name, o.provider, o.offer_id, o.billing_model, o.tier, o.commitment_term_hours
        order by o.observed_at_basis != 'row', o.file_sha256, o.row_number
    ) = 1
)

select * from final
