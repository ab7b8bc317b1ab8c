-- One row per compatibility request: the verdict over every ROCm release the declared version may
-- mean (all unsupported → unsupported, all supported → supported, otherwise unknown) with every reason.
with candidates as (
    select * from {{ ref('int_compat_candidates') }}
),

per_request as (
    select
        gpu_model, rocm_version, os, kernel, amdgpu_driver_version, torch_version, engine,
        list(release order by string_split(release, '.')::integer[]) filter (where release is not null) as rocm_releases,
        list(verdict order by string_split(release, '.')::integer[]) as verdicts,
        list_distinct(flatten(list(reasons))) as all_reasons,
        any_value(llvm_target) as llvm_target,
        any_value(os_family) as os_family,
        any_value(os_release) as os_release,
        any_value(kernel_flavour) as kernel_flavour,
        string_agg(release || ' ' || verdict, ', ' order by string_split(release, '.')::integer[]) as verdict_per_release
    from candidates
    group by all
),

final as (
    select
        gpu_model, rocm_version, os, kernel, amdgpu_driver_version, torch_version, engine,
        case
            when list_bool_and(list_transform(verdicts, lambda v: v = 'unsupported')) then 'unsupported'
            when list_bool_and(list_transform(verdicts, lambda v: v = 'supported')) then 'supported'
            else 'unknown'
        end as verdict,
        case
            when len(list_distinct(verdicts)) > 1
                then list_prepend(format('ROCm {} means {} releases that differ ({}); give the full version',
                                         rocm_version, len(rocm_releases), verdict_per_release), all_reasons)
            when list_bool_and(list_transform(verdicts, lambda v: v = 'supported'))
                then [format('{} ({}) with ROCm {}: every declared component is listed as compatible in AMD''s matrix',
                             gpu_model, llvm_target, array_to_string(rocm_releases, ', '))]
            else all_reasons
        end as reasons,
        rocm_releases, llvm_target, os_family, os_release, kernel_flavour
    from per_request
)

select * from final
