-- One row per declared workload, its model named by its catalog id: a workload may name a model
-- declared by config.json by its Hugging Face repo id (catalog models were resolved on reading
-- workloads.yaml: flows/ingest/names.py).
with workloads as (
    select * from {{ ref('stg_workloads') }}
),

declared_models as (
    select lower(hf_name) as hf_name, min(model_id) as model_id
    from {{ ref('int_llm_models') }} where hf_name is not null group by all
),

final as (
    select w.* replace (coalesce(d.model_id, w.model_id) as model_id)
    from workloads as w
    left join declared_models as d on d.hf_name = lower(w.model_id)
)

select * from final
