-- One row per LLM declared by a Hugging Face config.json (model-config sources): its architecture
-- as the catalog holds it. The adapter read every field and computed (or took) the parameter count.
with configs as (
    select * from {{ source('raw', 'model_configs') }}
),

final as (
    select * from configs
)

select * from final
