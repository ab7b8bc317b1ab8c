-- One row per compatibility request × ROCm release it may mean ('6.4' means every 6.4.x release;
-- none when the version is missing or unknown): every fact of AMD's matrix about that release and the
-- parsed stack (int_compat_stacks) — GPU target, OS, kernel, PyTorch, engine, driver and the per-GPU
-- OS limits of AMD's footnotes — as flags and listings; int_compat_candidates words the verdicts.
-- Ephemeral (inlined into int_compat_candidates, its one reader): one dbt node fewer per build.
{{ config(materialized='ephemeral') }}
with parsed as (
    select * from {{ ref('int_compat_stacks') }}
),

releases as (
    select rocm_version as release, gpu_os_limits_shipped from {{ source('ref', 'rocm_releases') }}
),

candidates as (
    select p.*, rel.release, rel.gpu_os_limits_shipped
    from parsed as p
    left join releases as rel
        on rel.release = p.rocm_declared or starts_with(rel.release, p.rocm_declared || '.')
),

facts as (
    select
        c.*,
        string_split(c.release, '.')::integer[] as release_parts,
        exists (select 1 from {{ source('ref', 'rocm_gpu_targets') }} t where t.rocm_version = c.release and t.llvm_target = c.llvm_target)
            as target_listed,
        (select min_by(t.rocm_version, string_split(t.rocm_version, '.')::integer[]) from {{ source('ref', 'rocm_gpu_targets') }} t
         where t.llvm_target = c.llvm_target) as target_first_release,
        exists (select 1 from {{ source('ref', 'rocm_os_support') }} s where s.rocm_version = c.release and s.os_family = c.os_family
                and (s.os_version = c.os_release or starts_with(c.os_release, s.os_version || '.'))) as os_listed,
        exists (select 1 from {{ source('ref', 'rocm_os_support') }} s where s.rocm_version = c.release and s.os_family = c.os_family
                and starts_with(s.os_version, c.os_release || '.')) as os_needs_point_release,
        (select string_agg(distinct s.os_version, ', ' order by s.os_version desc) from {{ source('ref', 'rocm_os_support') }} s
         where s.rocm_version = c.release and s.os_family = c.os_family) as os_versions_listed,
        -- The kernel's flavour (GA/HWE/…) for the declared OS release, by major.minor.
        (select min(k.kernel_flavour) from {{ source('ref', 'os_kernels') }} k where k.os_family = c.os_family
         and (k.os_version = c.os_release or starts_with(c.os_release, k.os_version || '.'))
         and k.kernel_version = c.kernel_major_minor) as kernel_flavour,
        (select string_agg(k.kernel_as_listed, ', ') from {{ source('ref', 'os_kernels') }} k where k.os_family = c.os_family
         and (k.os_version = c.os_release or starts_with(c.os_release, k.os_version || '.'))) as kernels_listed,
        exists (select 1 from {{ source('ref', 'rocm_pytorch_versions') }} v where v.rocm_version = c.release
                and v.pytorch_version = c.torch_major_minor)
        or exists (select 1 from {{ source('ref', 'pytorch_rocm_wheels') }} w where w.pytorch_version = c.torch_major_minor
                   and (w.rocm_wheel_version = c.release or starts_with(c.release, w.rocm_wheel_version || '.')))
            as torch_listed,
        (select string_agg(v.pytorch_version, ', ') from {{ source('ref', 'rocm_pytorch_versions') }} v where v.rocm_version = c.release)
            as torch_versions_listed,
        exists (select 1 from {{ source('ref', 'engine_rocm_requirements') }} e where e.engine = c.engine) as engine_known,
        (select min(e.min_rocm_version) from {{ source('ref', 'engine_rocm_requirements') }} e
         where e.engine = c.engine and e.llvm_target = c.llvm_target) as engine_min_rocm,
        exists (select 1 from {{ source('ref', 'rocm_amdgpu_drivers') }} d where d.rocm_version = c.release) as drivers_listed,
        exists (select 1 from {{ source('ref', 'rocm_amdgpu_drivers') }} d where d.rocm_version = c.release
                and (d.amdgpu_driver_version = c.amdgpu_driver_version
                     or (ends_with(d.amdgpu_driver_version, '.x')
                         and starts_with(c.amdgpu_driver_version || '.', left(d.amdgpu_driver_version, -1)))))
            as driver_listed,
        (select string_agg(d.amdgpu_driver_version, ', ') from {{ source('ref', 'rocm_amdgpu_drivers') }} d where d.rocm_version = c.release)
            as drivers_listed_text
    from candidates as c
),

final as (
    select
        f.*,
        -- Per-GPU OS limits from AMD's footnotes (data/reference/rocm_gpu_os_limits.csv).
        (select string_agg(distinct l.os_family || coalesce(' ' || l.os_version, '')
                           || coalesce(' (' || l.kernel_flavour || ' kernel)', ''), ', ')
         from {{ source('ref', 'rocm_gpu_os_limits') }} l where l.rule = 'gpu_only_on' and l.rocm_version = f.release
         and l.gpu_model = f.gpu_model) as only_on_text,
        (select any_value(l.footnote) from {{ source('ref', 'rocm_gpu_os_limits') }} l where l.rule = 'gpu_only_on'
         and l.rocm_version = f.release and l.gpu_model = f.gpu_model) as only_on_footnote,
        (select string_agg(distinct l.kernel_flavour, ' or ') from {{ source('ref', 'rocm_gpu_os_limits') }} l where l.rule = 'gpu_only_on'
         and l.rocm_version = f.release and l.gpu_model = f.gpu_model and l.os_family = f.os_family
         and (l.os_version is null or l.os_version = f.os_release or starts_with(f.os_release, l.os_version || '.'))
         and l.kernel_flavour is not null) as only_on_flavours,
        exists (select 1 from {{ source('ref', 'rocm_gpu_os_limits') }} l where l.rule = 'gpu_only_on' and l.rocm_version = f.release
                and l.gpu_model = f.gpu_model and l.os_family = f.os_family
                and (l.os_version is null or l.os_version = f.os_release or starts_with(f.os_release, l.os_version || '.')))
            as only_on_os_match,
        (select any_value(l.kernel_flavour || '|' || l.footnote) from {{ source('ref', 'rocm_gpu_os_limits') }} l where l.rule = 'gpu_not_on'
         and l.rocm_version = f.release and l.gpu_model = f.gpu_model and l.os_family = f.os_family
         and (l.os_version is null or l.os_version = f.os_release)) as not_on_rule,
        (select any_value(l.footnote) from {{ source('ref', 'rocm_gpu_os_limits') }} l where l.rule = 'os_only_for'
         and l.rocm_version = f.release and l.os_family = f.os_family
         and (l.os_version is null or l.os_version = f.os_release or starts_with(f.os_release, l.os_version || '.'))) as os_rule_footnote,
        (select string_agg(distinct l.gpu_model, ', ') from {{ source('ref', 'rocm_gpu_os_limits') }} l where l.rule = 'os_only_for'
         and l.rocm_version = f.release and l.os_family = f.os_family
         and (l.os_version is null or l.os_version = f.os_release or starts_with(f.os_release, l.os_version || '.'))) as os_rule_gpus
    from facts as f
)

select * from final
