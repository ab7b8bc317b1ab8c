-- One row per distinct software stack to check: an offer's GPU model and declared image (ROCm, OS,
-- kernel, amdgpu driver) × the inference engine of a workload. The CLI's check-compat supplies a
-- one-row table of this shape (and may add a PyTorch version).
with offers_now as (
    select * from {{ ref('int_offers') }}
),

engines as (
    select distinct lower(engine) as engine from {{ ref('int_workloads') }}
),

final as (
    select distinct
        o.gpu_model,
        o.rocm_version,
        o.os,
        o.kernel,
        o.amdgpu_driver_version,
        null::varchar as torch_version,
        e.engine
    from offers_now as o
    cross join engines as e
)

select * from final
