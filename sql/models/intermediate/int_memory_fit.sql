-- One row per memory-fit request (workload × GPU model × GPU count): the breakdown at the requested
-- count, the verdict with reasons in plain words, and the fewest GPUs of that model that fit.
with requirements as (
    select
        *,
        model_known and precision_known and gpu_known and memory_bytes is not null as is_known,
        required_bytes_per_gpu <= available_bytes_per_gpu and heads_split_evenly and context_within_model
            as fits_memory
    from {{ ref('int_memory_requirements') }}
),

fewest as (
    select workload_id, gpu_model, gpu_count,
           min(candidate_gpu_count) filter (where fits_memory and precision_supported) as min_gpus
    from requirements
    group by all
),

requested as (
    select r.*, f.min_gpus
    from requirements as r
    join fewest as f using (workload_id, gpu_model, gpu_count)
    where r.candidate_gpu_count = r.gpu_count
),

final as (
    select
        workload_id, model_id, precision, kv_cache_precision as kv_precision, mode, engine_key as engine,
        context as context_tokens, sequences as concurrency,
        -- Training only: how activations are stored (none, selective, full).
        case when mode <> 'inference' then checkpointing_mode end as activation_checkpointing,
        gpu_model, gpu_count,
        weights_bytes_per_gpu, kv_cache_bytes_per_gpu, activation_bytes_per_gpu, optimizer_bytes_per_gpu,
        reserve_bytes_per_gpu, required_bytes_per_gpu, available_bytes_per_gpu, headroom_bytes_per_gpu,
        memory_basis, memory_source, gpu_memory_fraction, kv_bytes_per_token,
        case when is_known then fits_memory end as fits,
        case when is_known then precision_supported end as precision_supported,
        case
            when not is_known then 'unknown'
            when not precision_supported then 'precision_unsupported'
            when fits_memory then 'fits'
            else 'does_not_fit'
        end as verdict,
        list_filter([
            case when not model_known then format('model {} is not in the LLM catalog (data/reference/llm_models.csv)', model_id) end,
            case when not precision_known then format('precision {} is not known (data/reference/precisions.csv)', precision) end,
            case when not gpu_known then format('GPU {} is not in the GPU catalog', gpu_model) end,
            case when gpu_known and memory_bytes is null then format('no memory size is recorded for {}', gpu_model) end,
            case when model_known and gpu_known and not engine_known and engine_key not in ('default', 'pytorch')
                then format('no memory settings are shipped for engine {}; used the default fraction {}', engine_key, gpu_memory_fraction) end,
            case when is_known and not precision_supported
                then format('{} has no native {} support (native: {}); {} weights are not run by falling back to another precision',
                            gpu_model, upper(precision), precisions_native, upper(precision)) end,
            case when is_known and not context_within_model
                then format('context of {} tokens exceeds the model''s maximum of {}', context, max_context) end,
            -- Beyond the native window but within the maximum: only with the model's rope scaling on.
            case when is_known and context_within_model and context > native_context_tokens
                then format('context of {} tokens is beyond the model''s native {} tokens: it needs rope scaling ({}) enabled in the engine',
                            context, native_context_tokens, coalesce(rope_scaling, 'not stated')) end,
            case when is_known and not heads_split_evenly
                then format('{} attention heads do not split evenly over {} GPUs (tensor parallel)', attention_heads, gpu_count) end,
            case when is_known and required_bytes_per_gpu > available_bytes_per_gpu
                then format('needs {} GB per GPU (weights {} GB, KV cache {} GB, activations {} GB, optimizer {} GB, reserve {} GB) but {} has {} GB',
                            round(required_bytes_per_gpu / 1e9, 1), round(weights_bytes_per_gpu / 1e9, 1),
                            round(kv_cache_bytes_per_gpu / 1e9, 1), round(activation_bytes_per_gpu / 1e9, 1),
                            round(optimizer_bytes_per_gpu / 1e9, 1), round(reserve_bytes_per_gpu / 1e9, 1),
                            gpu_model, round(available_bytes_per_gpu / 1e9, 1)) end,
            case when is_known and fits_memory
                then format('fits with {} GB headroom per GPU', round(headroom_bytes_per_gpu / 1e9, 1)) end
        ], lambda r: r is not null) as reasons,
        min_gpus
    from requested
)

select * from final
