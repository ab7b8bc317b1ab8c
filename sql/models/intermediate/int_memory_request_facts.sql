-- One row per memory-fit request (int_fit_requests) × candidate GPU count (1, 2, 4 … 64 and the
-- requested count): what the bytes are computed from — the request with its defaults applied, the
-- model's architecture, the precisions' bytes per value, the GPU's memory and the engine's memory
-- fraction and reserve. int_memory_requirements does the arithmetic. Conventions: docs/feasibility.md.
-- Ephemeral (inlined into int_memory_requirements, its one reader): one dbt node fewer per build.
{{ config(materialized='ephemeral') }}
with requests as (
    -- An unstated precision is bf16, and for QLoRA a 4-bit NF4 base (a 16-bit QLoRA base is refused
    -- where the request is made: workloads.yaml and check-fit).
    select * replace (coalesce(precision, case when mode = 'qlora' then 'nf4' else 'bf16' end) as precision)
    from {{ ref('int_fit_requests') }}
),

llm_models as (
    -- The LLM catalog plus models declared by config.json (model-config sources).
    select * from {{ ref('int_llm_models') }}
),

precisions as (
    select * from {{ source('ref', 'precisions') }}
),

gpus as (
    select g.gpu_model, g.vendor, g.precisions_native, m.memory_bytes, m.memory_basis, m.memory_source
    from {{ source('ref', 'gpus') }} as g
    left join {{ ref('int_gpu_memory') }} as m on m.gpu_model = g.gpu_model
),

engines as (
    select * from {{ source('ref', 'engine_memory') }}
),

checkpointing as (
    select * from {{ source('ref', 'activation_checkpointing') }}
),

candidates as (
    -- The requested count and every count min_gpus is searched among (data/reference/conventions.csv).
    select r.*, unnest(list_distinct(conv.min_gpus_candidate_counts || [r.gpu_count])) as candidate_gpu_count
    from requests as r
    cross join {{ ref('stg_conventions') }} as conv
),

resolved as (
    select
        c.*,
        m.model_id is not null as model_known,
        m.params_total, m.layers, m.hidden_size, m.attention_heads, m.kv_heads, m.head_dim, m.attention,
        m.kv_lora_rank, m.qk_rope_head_dim, m.intermediate_size, m.max_context,
        m.native_context_tokens, m.rope_scaling,
        coalesce(m.sliding_window_layers, 0) as sliding_layers,
        m.sliding_window_tokens,
        coalesce(c.context_tokens, m.max_context) as context,
        coalesce(c.concurrency, 1) as sequences,
        -- vLLM's default KV dtype ("auto") follows the activations: 16-bit unless declared.
        coalesce(c.kv_precision, case when c.precision = 'fp16' then 'fp16' else 'bf16' end) as kv_cache_precision,
        wp.precision is not null as precision_known,
        wp.bytes_per_param + wp.scale_bytes_per_param as weight_bytes_per_param,
        wp.native_any,
        kp.bytes_per_param as kv_bytes_per_value,
        g.gpu_model is not null as gpu_known,
        g.vendor, g.precisions_native, g.memory_bytes, g.memory_basis, g.memory_source,
        coalesce(c.activation_checkpointing, 'selective') as checkpointing_mode,
        ac.stored_bytes_per_token_hidden_layer, ac.stored_bytes_per_token_head_token_layer, ac.recomputed_layers,
        case
            when c.mode <> 'inference' then 'pytorch'
            when c.engine is null then 'default'
            else c.engine
        end as engine_key
    from candidates as c
    left join llm_models as m on m.model_id = c.model_id
    left join precisions as wp on wp.precision = c.precision
    left join precisions as kp on kp.precision = coalesce(c.kv_precision, case when c.precision = 'fp16' then 'fp16' else 'bf16' end)
    left join gpus as g on g.gpu_model = c.gpu_model
    -- Training stores activations per the workload's checkpointing mode (default selective: docs/feasibility.md).
    left join checkpointing as ac on ac.activation_checkpointing = coalesce(c.activation_checkpointing, 'selective')
),

final as (
    select
        r.*,
        e.engine is not null as engine_known,
        coalesce(e.max_batched_tokens, d.max_batched_tokens, 0) as max_batched_tokens,
        coalesce(e.fixed_reserve_bytes, d.fixed_reserve_bytes) as fixed_reserve_bytes,
        case
            when r.gpu_memory_utilization is not null then r.gpu_memory_utilization
            when r.engine_key = 'sglang' then
                -- SGLang's static fraction (server_args.py), in MiB as SGLang computes it.
                case when r.memory_bytes / 1048576 > 160 * 1024 then round(
                    (r.memory_bytes / 1048576
                        - greatest(512 + 16384 * 1.5 + 512 * 2 + r.candidate_gpu_count / 8 * 1024, 10240))
                    / (r.memory_bytes / 1048576), 3)
                else 0.88 end
            else coalesce(e.gpu_memory_fraction, d.gpu_memory_fraction)
        end::double as gpu_memory_fraction
    from resolved as r
    left join engines as e on e.engine = r.engine_key
    cross join (select * from engines where engine = 'default') as d
)

select * from final
