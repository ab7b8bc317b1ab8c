-- One row per declared workload (data/workloads.yaml).
with workloads as (
    select * from {{ source('raw', 'workloads') }}
),

declared_models as (
    -- A workload may name a model declared by config.json by its Hugging Face repo id
    -- (catalog models were resolved on reading workloads.yaml: flows/ingest/names.py).
    select lower(hf_name) as hf_name, min(model_id) as model_id
    from {{ ref('stg_llm_models') }} where hf_name is not null group by all
),

final as (
    select
        w.* exclude (line, match_workload_id, model_id),
        coalesce(d.model_id, w.model_id) as model_id,
        -- Runs that declare this workload id measure it; by default a workload matches its own id.
        coalesce(w.match_workload_id, w.workload_id) as benchmark_workload_id,
        w.line as declared_on_line
    from workloads as w
    left join declared_models as d on d.hf_name = lower(w.model_id)
)

select * from final
