-- One row per memory-fit request × candidate GPU count (1, 2, 4 … 64 and the requested count): the
-- bytes one GPU must hold, broken down. Formulas and conventions: docs/feasibility.md.
with requests as (
    -- An unstated precision is bf16, and for QLoRA a 4-bit NF4 base (a 16-bit QLoRA base is refused
    -- where the request is made: workloads.yaml and check-fit).
    select * replace (coalesce(precision, case when mode = 'qlora' then 'nf4' else 'bf16' end) as precision)
    from {{ ref('int_fit_requests') }}
),

models as (
    -- The catalog plus models declared by config.json (model-config sources).
    select * from {{ ref('stg_llm_models') }}
),

precisions as (
    select * from {{ source('ref', 'precisions') }}
),

gpus as (
    select g.model as gpu_model, g.vendor, g.precisions_native, m.memory_bytes, m.memory_basis, m.memory_source
    from {{ source('ref', 'gpus') }} as g
    left join {{ ref('int_gpu_memory') }} as m on m.gpu_model = g.model
),

engines as (
    select * from {{ source('ref', 'engine_memory') }}
),

checkpointing as (
    select * from {{ source('ref', 'activation_checkpointing') }}
),

candidates as (
    select *, unnest(list_distinct([1, 2, 4, 8, 16, 32, 64, gpu_count])) as candidate_gpus
    from requests
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
    left join models as m on m.model_id = c.model_id
    left join precisions as wp on wp.precision = c.precision
    left join precisions as kp on kp.precision = coalesce(c.kv_precision, case when c.precision = 'fp16' then 'fp16' else 'bf16' end)
    left join gpus as g on g.gpu_model = c.gpu_model
    -- Training stores activations per the workload's checkpointing mode (default selective: docs/feasibility.md).
    left join checkpointing as ac on ac.activation_checkpointing = coalesce(c.activation_checkpointing, 'selective')
),

with_engine as (
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
                        - greatest(512 + 16384 * 1.5 + 512 * 2 + r.candidate_gpus / 8 * 1024, 10240))
                    / (r.memory_bytes / 1048576), 3)
                else 0.88 end
            else coalesce(e.gpu_memory_fraction, d.gpu_memory_fraction)
        end::double as gpu_memory_fraction
    from resolved as r
    left join engines as e on e.engine = r.engine_key
    cross join (select * from engines where engine = 'default') as d
),

per_token as (
    select
        *,
        -- KV bytes per token per layer on one GPU. MLA keeps one latent per layer, replicated on every
        -- tensor-parallel rank; GQA/MHA shard KV heads, replicating them when GPUs outnumber KV heads.
        case
            when attention = 'mla' then (kv_lora_rank + qk_rope_head_dim) * kv_bytes_per_value
            else 2 * greatest(1, kv_heads // candidate_gpus) * head_dim * kv_bytes_per_value
        end as kv_bytes_per_token_layer_per_gpu,
        (case
            when attention = 'mla' then (kv_lora_rank + qk_rope_head_dim) * kv_bytes_per_value
            else 2 * kv_heads * head_dim * kv_bytes_per_value
        end * (layers - sliding_layers))::bigint as kv_bytes_per_token,
        -- Sequences occupy whole 16-token KV blocks (vLLM's default block size).
        ceil(context / 16) * 16 as context_in_blocks,
        -- A sliding-window layer keeps at most window - 1 + one batch of tokens (vLLM SlidingWindowSpec).
        least(ceil(context / 16) * 16,
              (ceil((sliding_window_tokens - 1 + max_batched_tokens) / 16) + 1) * 16) as sliding_tokens,
        -- LoRA adapters on every attention and MLP projection: rank × (fan_in + fan_out) each.
        coalesce(lora_rank, 16) * layers * (
            (hidden_size + attention_heads * coalesce(head_dim, hidden_size // attention_heads))
            + 2 * (hidden_size + coalesce(kv_heads, attention_heads) * coalesce(head_dim, hidden_size // attention_heads))
            + (attention_heads * coalesce(head_dim, hidden_size // attention_heads) + hidden_size)
            + 3 * (hidden_size + intermediate_size)
        ) as lora_params
    from with_engine
),

bytes as (
    select
        *,
        -- Weights are split over the GPUs (tensor parallel for inference, ZeRO-3 sharding for training).
        ceil(params_total * weight_bytes_per_param / candidate_gpus)::bigint as weights_bytes_per_gpu,
        case when mode = 'inference' then (sequences * kv_bytes_per_token_layer_per_gpu * (
            (layers - sliding_layers) * context_in_blocks + sliding_layers * coalesce(sliding_tokens, 0)
        ))::bigint else 0 end as kv_cache_bytes_per_gpu,
        case
            -- One layer's activations for one prefill chunk (EleutherAI cookbook, 16-bit activations).
            when mode = 'inference' then (least(context * sequences, max_batched_tokens) * hidden_size * (16 * 2 + 2))::bigint
            -- Training, per GPU micro-batch of `sequences` sequences (Korthikanti et al. 2022, 16-bit activations):
            -- every layer stores s·b·(x·h + y·a·s) bytes, and `recomputed_layers` hold s·b·(34·h + 5·a·s) while recomputed.
            else (context * sequences * layers * (stored_bytes_per_token_hidden_layer * hidden_size
                    + stored_bytes_per_token_head_token_layer * attention_heads * context)
                  + recomputed_layers * context * sequences * (34 * hidden_size + 5 * attention_heads * context))::bigint
        end as activation_bytes_per_gpu,
        case mode
            -- Mixed-precision AdamW: 2-byte gradients + fp32 master, momentum, variance (12 bytes), sharded.
            when 'training' then ceil(params_total * (2 + 12) / candidate_gpus)::bigint
            -- LoRA adapters in fp32: weight 4 + gradient 4 + Adam states 8 bytes per adapter parameter.
            when 'lora' then (lora_params * 16)::bigint
            when 'qlora' then (lora_params * 16)::bigint
            else 0
        end as optimizer_bytes_per_gpu,
        (memory_bytes * (1 - gpu_memory_fraction) + fixed_reserve_bytes)::bigint as reserve_bytes_per_gpu
    from per_token
),

final as (
    select
        *,
        weights_bytes_per_gpu + kv_cache_bytes_per_gpu + activation_bytes_per_gpu
            + optimizer_bytes_per_gpu + reserve_bytes_per_gpu as required_bytes_per_gpu,
        memory_bytes as available_bytes_per_gpu,
        memory_bytes - (weights_bytes_per_gpu + kv_cache_bytes_per_gpu + activation_bytes_per_gpu
            + optimizer_bytes_per_gpu + reserve_bytes_per_gpu) as headroom_bytes_per_gpu,
        -- Tensor parallelism needs the attention heads to split evenly over the GPUs.
        mode <> 'inference' or attention_heads % candidate_gpus = 0 as heads_split_evenly,
        native_any is null or list_has_any(string_split(precisions_native, ' '), string_split(native_any, ' '))
            as precision_supported,
        context <= max_context as context_within_model
    from bytes
)

select * from final
