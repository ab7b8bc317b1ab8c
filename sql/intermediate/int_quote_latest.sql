-- One row per offer × billing option (billing model, tier, commitment term) per source: its latest
-- observation, as every model about the current state of quotes reads it.
with observations as (
    select * from stg_quote_observations
),

final as (
    select *
    from observations
    qualify row_number() over (
        partition by source_name, provider, offer_id, billing_model, tier, commitment_term_hours
        order by observed_at desc, file_sha256, row_number
    ) = 1
)

select * from final
