-- One row per benchmark run: its output tokens/s per GPU against the best published result for the
-- same GPU model, LLM (model_id) and precision (data/reference/published_throughput_ceilings.csv: real MLPerf
-- results with sources). Far above it (more than perf_vs_published_factor ×, plausibility_limits.csv)
-- is PERF_IMPLAUSIBLE: kept out of rankings until the source is confirmed (sources.yaml
-- perf_confirmed: true). Where no published result exists for the combination, no flag.
with runs as (
    select * from {{ ref('int_current_benchmark_runs') }}
),

llm_models as (
    -- A run may name its LLM by catalog id or Hugging Face repo id.
    select lower(model_id) as model_id, lower(model_id) as name from {{ source('ref', 'llm_models') }}
    union
    select lower(model_id), lower(hf_name) from {{ source('ref', 'llm_models') }}
),

published as (
    select
        gpu_model, lower(model_id) as model_id, lower(precision) as precision, output_tokens_per_s_per_gpu,
        format('{} {} on {} GPUs', benchmark, scenario, gpu_count) as result
    from {{ source('ref', 'published_throughput_ceilings') }}
),

ceilings as (
    select
        gpu_model, model_id, precision,
        max(output_tokens_per_s_per_gpu) as best_tokens_per_s_per_gpu,
        -- Two results at the same best rate: the one whose description sorts first, not whichever
        -- row the aggregate met first (that could change between builds of the same data).
        first(result order by output_tokens_per_s_per_gpu desc, result) as best_result
    from published
    group by all
),

factor as (
    select max_value::double as factor from {{ source('ref', 'plausibility_limits') }} where "limit" = 'perf_vs_published_factor'
),

rated as (
    select
        r.run_id, r.gpu_model, r.precision, coalesce(r.perf_confirmed, false) as perf_confirmed,
        coalesce(m.model_id, lower(r.model_id)) as catalog_model_id,
        -- The rate the cost model would use for output tokens: the reported rate, else counted / duration.
        coalesce(r.output_tokens_per_s,
            case when r.unit = 'output_tokens' then r.completed / r.duration_s end) / r.gpu_count
            as output_tokens_per_s_per_gpu
    from runs as r
    left join llm_models as m on m.name = lower(r.model_id)
),

final as (
    select
        r.run_id,
        c.best_tokens_per_s_per_gpu as published_best_tokens_per_s_per_gpu,
        c.best_result as published_best_result,
        r.output_tokens_per_s_per_gpu / c.best_tokens_per_s_per_gpu as perf_vs_published_ratio,
        coalesce(r.output_tokens_per_s_per_gpu > f.factor * c.best_tokens_per_s_per_gpu, false) as is_perf_implausible,
        r.perf_confirmed,
        case when r.output_tokens_per_s_per_gpu > f.factor * c.best_tokens_per_s_per_gpu then format(
            'PERF_IMPLAUSIBLE: {} output tokens/s per GPU is {}× the best published {} {} {} result ({} per GPU, {}); more than {}× is not ranked until the source sets perf_confirmed: true{}',
            round(r.output_tokens_per_s_per_gpu, 2), round(r.output_tokens_per_s_per_gpu / c.best_tokens_per_s_per_gpu, 1),
            r.gpu_model, r.catalog_model_id, coalesce(r.precision, '(precision not stated)'),
            round(c.best_tokens_per_s_per_gpu, 2), c.best_result, f.factor,
            case when r.perf_confirmed then ' (confirmed: ranked)' else '' end)
        end as perf_detail
    from rated as r
    cross join factor as f
    left join ceilings as c
        on c.gpu_model = r.gpu_model and c.model_id = r.catalog_model_id
        and c.precision is not distinct from lower(r.precision)
)

select * from final
