-- One row per memory-fit request: a workload that names a model × a catalog GPU model × a GPU count
-- (1, 2, 4, 8 and every count an offer rents). The CLI's check-fit supplies a one-row table of this shape.
with workloads as (
    select * from {{ ref('int_workloads') }}
    -- A workload without a model (a generic batch job) is not memory-checked.
    where model_id is not null
),

gpus as (
    select gpu_model from {{ source('ref', 'gpus') }}
),

offered as (
    select distinct gpu_model, gpus_per_node as gpu_count from {{ ref('int_offers') }}
),

counts as (
    select gpus.gpu_model, c.gpu_count
    from gpus
    -- The counts every catalog GPU is checked at (data/reference/conventions.csv).
    cross join (select unnest(fit_request_gpu_counts) as gpu_count from {{ ref('stg_conventions') }}) as c
    union
    select gpu_model, gpu_count from offered
),

final as (
    select
        w.workload_id,
        lower(w.model_id) as model_id,
        -- Unstated: int_memory_requirements applies the default (bf16; nf4 for QLoRA).
        lower(w.precision) as precision,
        lower(w.kv_precision) as kv_precision,
        w.context_tokens,
        w.concurrency,
        coalesce(w.mode, case when w.kind = 'training' then 'training' else 'inference' end) as mode,
        lower(w.engine) as engine,
        w.gpu_memory_utilization,
        lower(w.activation_checkpointing) as activation_checkpointing,
        w.lora_rank,
        c.gpu_model,
        c.gpu_count::integer as gpu_count
    from workloads as w
    cross join counts as c
)

select * from final
