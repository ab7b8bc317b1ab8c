-- One row per configuration × declared software stack (an offer's GPU model and image × a workload's
-- engine): the ROCm compatibility verdict (supported / unsupported / unknown) with every reason in
-- plain words. Unknown GPU, OS or version → unknown, never supported. Columns: docs/feasibility.md.
with checks as (
    select * from {{ ref('int_compat_checks') }}
),

final as (
    select
        gpu_model, rocm_version, os, kernel, amdgpu_driver_version, torch_version, engine,
        verdict, reasons, rocm_releases, llvm_target, os_family, os_release, kernel_flavour
    from checks
)

select * from final
