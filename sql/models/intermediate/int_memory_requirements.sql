-- One row per memory-fit request × candidate GPU count (int_memory_request_facts): the bytes one GPU
-- must hold, broken down. Formulas and conventions: docs/feasibility.md.
-- Rebuilt only when one of its inputs changed (a scrape that lists the same offer shapes changes
-- none; it took ~1 s of every incremental refresh at SCALE=default): the rows carry the inputs' hash
-- (inputs_hash; int_memory_fit names its columns, so it goes no further).
{%- set inputs = memory_requirement_inputs() %}
{{ config(materialized='incremental', incremental_strategy='append',
          pre_hook="{{ delete_if_inputs_changed(memory_requirement_inputs()) }}") }}

{% if inputs_unchanged(inputs) -%}
-- Its inputs are as they were: its rows stay, this build adds none.
select * from {{ this }} where false
{%- else %}
with with_engine as (
    select * from {{ ref('int_memory_request_facts') }}
),

per_token as (
    select
        *,
        -- KV bytes per token per layer on one GPU. MLA keeps one latent per layer, replicated on every
        -- tensor-parallel rank; GQA/MHA shard KV heads, replicating them when GPUs outnumber KV heads.
        case
            when attention = 'mla' then (kv_lora_rank + qk_rope_head_dim) * kv_bytes_per_value
            else 2 * greatest(1, kv_heads // candidate_gpu_count) * head_dim * kv_bytes_per_value
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
        ceil(params_total * weight_bytes_per_param / candidate_gpu_count)::bigint as weights_bytes_per_gpu,
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
            when 'training' then ceil(params_total * (2 + 12) / candidate_gpu_count)::bigint
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
        mode <> 'inference' or attention_heads % candidate_gpu_count = 0 as heads_split_evenly,
        native_any is null or list_has_any(string_split(precisions_native, ' '), string_split(native_any, ' '))
            as precision_supported,
        context <= max_context as context_within_model
    from bytes
)

select *, ({{ inputs_fingerprint(inputs) }}) as inputs_hash from final where {{ inputs_changed() }}
{%- endif %}
