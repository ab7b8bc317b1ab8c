-- One row per LLM the memory formulas know: the bundled catalog (data/reference/llm_models.csv) and
-- the models declared by config.json (stg_model_configs). A declared model_id the catalog already
-- has is ignored: the catalog row carries its sources (docs/formats/model-config.md).
with catalog as (
    select *, 'catalog' as model_basis from {{ source('ref', 'llm_models') }}
),

declared as (
    select
        model_id, hf_name, params_total, params_active, layers, hidden_size, attention_heads, kv_heads,
        head_dim, attention, kv_lora_rank, qk_rope_head_dim, intermediate_size, experts, experts_per_token,
        vocab_size, max_context, native_context_tokens, rope_scaling, sliding_window_tokens, source,
        format('model-config (parameters {})', params_basis) as model_basis
    from {{ ref('stg_model_configs') }}
    where model_id not in (select model_id from catalog)
    -- Two configs for one model_id: the one landed from the latest file wins, deterministically.
    qualify row_number() over (partition by model_id order by source_name, file_sha256) = 1
),

final as (
    select * from catalog
    union all by name
    select * from declared
)

select * from final
