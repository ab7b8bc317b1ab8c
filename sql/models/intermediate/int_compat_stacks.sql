-- One row per compatibility request (int_compat_requests) with its free-text stack read into what the
-- ROCm matrix is keyed by: the declared ROCm version without '.x', the OS family and release, the
-- kernel's and PyTorch's major.minor, and the GPU's vendor, gfx target and first ROCm release.
-- Requests come from offers or from check-compat's one-row input, so the parsing lives here, on the
-- request, and both read the same rules.
-- Ephemeral (inlined into int_compat_release_facts, its one reader): one dbt node fewer per build.
{{ config(materialized='ephemeral') }}
with requests as (
    select * from {{ ref('int_compat_requests') }}
),

gpus as (
    select
        g.model as gpu_model, g.vendor, g.llvm_target as llvm_target_listed,
        -- Only a plain gfx id counts as a target; 'gfx1250 (unconfirmed)' does not.
        case when regexp_full_match(g.llvm_target, 'gfx[0-9a-f]+') then g.llvm_target end as llvm_target,
        p.first_rocm_version
    from {{ source('ref', 'gpus') }} as g
    left join {{ source('ref', 'rocm_gpu_products') }} as p on p.gpu_model = g.model
),

final as (
    select
        r.*,
        regexp_replace(trim(r.rocm_version), '\.x$', '') as rocm_declared,
        case
            when r.os ilike 'ubuntu%' then 'Ubuntu'
            when r.os ilike 'rhel%' or r.os ilike 'red hat%' then 'RHEL'
            when r.os ilike 'sles%' or r.os ilike 'suse%' then 'SLES'
            when r.os ilike 'oracle%' or r.os ilike 'ol %' then 'Oracle Linux'
            when r.os ilike 'debian%' then 'Debian'
            when r.os ilike 'azure linux%' then 'Azure Linux'
            when r.os ilike 'rocky%' then 'Rocky Linux'
            when r.os ilike 'centos%' then 'CentOS'
        end as os_family,
        case
            when r.os ilike 'sles%' or r.os ilike 'suse%' then nullif(
                regexp_extract(r.os, '(\d+)\s*-?\s*[Ss][Pp]\s*(\d+)', 1) || ' SP'
                || regexp_extract(r.os, '(\d+)\s*-?\s*[Ss][Pp]\s*(\d+)', 2), ' SP')
            else nullif(regexp_extract(r.os, '\d+(\.\d+)*'), '')
        end as os_release,
        nullif(regexp_extract(r.kernel, '^(\d+\.\d+)', 1), '') as kernel_major_minor,
        nullif(regexp_extract(r.torch_version, '^(\d+\.\d+)', 1), '') as torch_major_minor,
        g.gpu_model is not null as gpu_known,
        g.vendor, g.llvm_target, g.llvm_target_listed, g.first_rocm_version
    from requests as r
    left join gpus as g on g.gpu_model = r.gpu_model
),

select * from final
