{# AMD's ROCm compatibility rules as four steps over any relation of requests (the shape of
   int_compat_requests): the int_compat_* models run them on the offers' stacks and check-compat's
   request, int_validation_compat_checks on the stacks validate-host measured. One definition. #}

{% macro compat_stacks(requests) -%}
with requests as (
    select * from {{ requests }}
),

gpus as (
    select
        g.gpu_model, g.vendor, g.llvm_target as llvm_target_listed,
        -- Only a plain gfx id counts as a target; 'gfx1250 (unconfirmed)' does not.
        case when regexp_full_match(g.llvm_target, 'gfx[0-9a-f]+') then g.llvm_target end as llvm_target,
        p.first_rocm_version
    from {{ source('ref', 'gpus') }} as g
    left join {{ source('ref', 'rocm_gpu_products') }} as p on p.gpu_model = g.gpu_model
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
{%- endmacro %}

{% macro compat_release_facts(parsed) -%}
with parsed as (
    select * from {{ parsed }}
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
        (select string_agg(distinct s.os_version, ', ' order by list_transform(string_split(s.os_version, '.'), lambda x: try_cast(x as integer)) desc, s.os_version) from {{ source('ref', 'rocm_os_support') }} s
         where s.rocm_version = c.release and s.os_family = c.os_family) as os_versions_listed,
        -- The kernel's flavour (GA/HWE/…) for the declared OS release, by major.minor.
        (select min(k.kernel_flavour) from {{ source('ref', 'os_kernels') }} k where k.os_family = c.os_family
         and (k.os_version = c.os_release or starts_with(c.os_release, k.os_version || '.'))
         and k.kernel_version = c.kernel_major_minor) as kernel_flavour,
        -- Each listed text once (the release's rows and its family line's), by kernel version.
        (select string_agg(k.kernel_as_listed, ', ' order by list_transform(string_split(k.kernel_version, '.'), lambda x: try_cast(x as integer)), k.kernel_as_listed)
         from (select distinct k.kernel_version, k.kernel_as_listed from {{ source('ref', 'os_kernels') }} k where k.os_family = c.os_family
               and (k.os_version = c.os_release or starts_with(c.os_release, k.os_version || '.'))) k) as kernels_listed,
        exists (select 1 from {{ source('ref', 'rocm_pytorch_versions') }} v where v.rocm_version = c.release
                and v.torch_major_minor = c.torch_major_minor)
        or exists (select 1 from {{ source('ref', 'pytorch_rocm_wheels') }} w where w.torch_major_minor = c.torch_major_minor
                   and (w.rocm_wheel_version = c.release or starts_with(c.release, w.rocm_wheel_version || '.')))
            as torch_listed,
        (select string_agg(v.torch_major_minor, ', ' order by list_transform(string_split(v.torch_major_minor, '.'), lambda x: try_cast(x as integer)) desc, v.torch_major_minor) from {{ source('ref', 'rocm_pytorch_versions') }} v where v.rocm_version = c.release)
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
        (select string_agg(d.amdgpu_driver_version, ', ' order by list_transform(string_split(d.amdgpu_driver_version, '.'), lambda x: try_cast(x as integer)) desc, d.amdgpu_driver_version) from {{ source('ref', 'rocm_amdgpu_drivers') }} d where d.rocm_version = c.release)
            as drivers_listed_text
    from candidates as c
),

final as (
    select
        f.*,
        -- Per-GPU OS limits from AMD's footnotes (data/reference/rocm_gpu_os_limits.csv).
        (select string_agg(distinct l.os_family || coalesce(' ' || l.os_version, '')
                           || coalesce(' (' || l.kernel_flavour || ' kernel)', ''), ', '
                           order by l.os_family || coalesce(' ' || l.os_version, '')
                           || coalesce(' (' || l.kernel_flavour || ' kernel)', ''))
         from {{ source('ref', 'rocm_gpu_os_limits') }} l where l.rule = 'gpu_only_on' and l.rocm_version = f.release
         and l.gpu_model = f.gpu_model) as only_on_text,
        (select min(l.footnote) from {{ source('ref', 'rocm_gpu_os_limits') }} l where l.rule = 'gpu_only_on'
         and l.rocm_version = f.release and l.gpu_model = f.gpu_model) as only_on_footnote,
        (select string_agg(distinct l.kernel_flavour, ' or ' order by l.kernel_flavour) from {{ source('ref', 'rocm_gpu_os_limits') }} l where l.rule = 'gpu_only_on'
         and l.rocm_version = f.release and l.gpu_model = f.gpu_model and l.os_family = f.os_family
         and (l.os_version is null or l.os_version = f.os_release or starts_with(f.os_release, l.os_version || '.'))
         and l.kernel_flavour is not null) as only_on_flavours,
        exists (select 1 from {{ source('ref', 'rocm_gpu_os_limits') }} l where l.rule = 'gpu_only_on' and l.rocm_version = f.release
                and l.gpu_model = f.gpu_model and l.os_family = f.os_family
                and (l.os_version is null or l.os_version = f.os_release or starts_with(f.os_release, l.os_version || '.')))
            as only_on_os_match,
        (select min(l.kernel_flavour || '|' || l.footnote) from {{ source('ref', 'rocm_gpu_os_limits') }} l where l.rule = 'gpu_not_on'
         and l.rocm_version = f.release and l.gpu_model = f.gpu_model and l.os_family = f.os_family
         and (l.os_version is null or l.os_version = f.os_release)) as not_on_rule,
        (select min(l.footnote) from {{ source('ref', 'rocm_gpu_os_limits') }} l where l.rule = 'os_only_for'
         and l.rocm_version = f.release and l.os_family = f.os_family
         and (l.os_version is null or l.os_version = f.os_release or starts_with(f.os_release, l.os_version || '.'))) as os_rule_footnote,
        (select string_agg(distinct l.gpu_model, ', ' order by l.gpu_model) from {{ source('ref', 'rocm_gpu_os_limits') }} l where l.rule = 'os_only_for'
         and l.rocm_version = f.release and l.os_family = f.os_family
         and (l.os_version is null or l.os_version = f.os_release or starts_with(f.os_release, l.os_version || '.'))) as os_rule_gpus
    from facts as f
)

select * from final
{%- endmacro %}

{% macro compat_candidates(limits) -%}
with limits as (
    select * from {{ limits }}
),

findings as (
    select
        *,
        list_filter([
            case when gpu_known and vendor <> 'AMD'
                then format('{} is an {} GPU; ROCm runs only on AMD GPUs', gpu_model, vendor) end,
            case when release is not null and llvm_target is not null and not target_listed
                then format('{} ({}) is not supported by ROCm {}{}', llvm_target, gpu_model, release,
                            coalesce('; it is first listed in ROCm ' || target_first_release, '; no shipped ROCm release lists it')) end,
            case when release is not null and target_listed and first_rocm_version is not null
                     and release_parts < string_split(first_rocm_version, '.')::integer[]
                then format('{} is first supported in ROCm {}; the stack has {}', gpu_model, first_rocm_version, release) end,
            case when release is not null and os_family is not null and os_release is not null
                     and not os_listed and not os_needs_point_release
                then format('{} {} is not supported by ROCm {} (supported {} releases: {})', os_family, os_release, release,
                            os_family, coalesce(os_versions_listed, 'none')) end,
            case when os_listed and gpu_os_limits_shipped and only_on_text is not null and not only_on_os_match
                then format('ROCm {} supports {} only on {} [{}]', release, gpu_model, only_on_text, only_on_footnote) end,
            case when os_listed and gpu_os_limits_shipped and only_on_os_match and only_on_flavours is not null
                     and kernel_flavour is not null and not list_contains(string_split(only_on_flavours, ' or '), kernel_flavour)
                then format('ROCm {} supports {} on {} {} only with the {} kernel; kernel {} is the {} kernel', release, gpu_model,
                            os_family, os_release, only_on_flavours, kernel, kernel_flavour) end,
            case when os_listed and gpu_os_limits_shipped and not_on_rule is not null
                     and kernel_flavour = split_part(not_on_rule, '|', 1)
                then format('ROCm {} does not support {} on {} {} with the {} kernel [{}]', release, gpu_model, os_family,
                            os_release, kernel_flavour, split_part(not_on_rule, '|', 2)) end,
            case when os_listed and gpu_os_limits_shipped and os_rule_gpus is not null
                     and not list_contains(string_split(os_rule_gpus, ', '), gpu_model)
                then format('on ROCm {}, {} {} is supported only for {} [{}]', release, os_family, os_release, os_rule_gpus,
                            os_rule_footnote) end,
            case when os_listed and kernel_major_minor is not null and kernels_listed is not null and kernel_flavour is null
                then format('kernel {} is not a listed kernel of {} {} (listed: {})', kernel, os_family, os_release, kernels_listed) end,
            case when release is not null and torch_major_minor is not null and not torch_listed
                then format('PyTorch {} is not listed for ROCm {} (AMD lists {})', torch_major_minor, release,
                            coalesce(torch_versions_listed, 'none')) end,
            case when release is not null and engine_known and llvm_target is not null and engine_min_rocm is null
                then format('{} does not list {} ({}) as a supported GPU', engine, llvm_target, gpu_model) end,
            case when release is not null and engine_min_rocm is not null
                     and release_parts < string_split(engine_min_rocm, '.')::integer[]
                then format('{} on {} ({}) needs ROCm ≥ {}; the stack has {}', engine, llvm_target, gpu_model,
                            engine_min_rocm, release) end,
            case when release is not null and amdgpu_driver_version is not null and drivers_listed and not driver_listed
                     and regexp_matches(amdgpu_driver_version, '^(5\.[67]|6\.[0-4]|30\.\d+)(\.|$)')
                then format('amdgpu driver {} is not listed for ROCm {} (listed: {})', amdgpu_driver_version, release,
                            drivers_listed_text) end
        ], lambda r: r is not null) as unsupported_reasons,
        list_filter([
            case when rocm_version is null then 'no ROCm version is declared' end,
            case when rocm_version is not null and release is null
                then format('ROCm {} is not in the shipped matrix (ROCm 6.0.0 to 7.2.3)', rocm_version) end,
            case when not gpu_known then format('GPU {} is not in the GPU catalog', coalesce(gpu_model, '(none)')) end,
            case when gpu_known and vendor = 'AMD' and llvm_target is null
                then format('the gfx target of {} is not confirmed ({}); no ROCm release lists it', gpu_model,
                            coalesce(llvm_target_listed, 'none recorded')) end,
            case when os is null then 'no OS is declared' end,
            case when os is not null and (os_family is null or os_release is null)
                then format('OS {} is not recognised (expected e.g. Ubuntu 22.04.5, RHEL 9.4, SLES 15 SP6)', os) end,
            case when release is not null and os_family is not null and not os_listed and os_needs_point_release
                then format('{} {} names no point release; ROCm {} lists {} {}', os_family, os_release, release, os_family,
                            os_versions_listed) end,
            case when os_listed and not gpu_os_limits_shipped
                then format('per-GPU OS limits for ROCm {} are not shipped; cannot confirm {} on {} {}', release, gpu_model,
                            os_family, os_release) end,
            case when os_listed and gpu_os_limits_shipped and only_on_os_match and only_on_flavours is not null
                     and kernel_flavour is null and kernel_major_minor is null
                then format('ROCm {} supports {} on {} {} only with the {} kernel; no kernel is declared', release, gpu_model,
                            os_family, os_release, only_on_flavours) end,
            case when os_listed and gpu_os_limits_shipped and not_on_rule is not null and kernel_major_minor is null
                then format('ROCm {} does not support {} on {} {} with the {} kernel; no kernel is declared', release, gpu_model,
                            os_family, os_release, split_part(not_on_rule, '|', 1)) end,
            case when kernel is not null and kernel_major_minor is null
                then format('kernel {} is not recognised (expected e.g. 5.15.0-122-generic)', kernel) end,
            case when os_listed and kernel_major_minor is not null and kernels_listed is null
                then format('no kernel list is shipped for {} {}', os_family, os_release) end,
            case when torch_version is not null and torch_major_minor is null
                then format('PyTorch version {} is not recognised', torch_version) end,
            case when engine is not null and engine <> 'pytorch' and not engine_known
                then format('no ROCm requirements are shipped for engine {}', engine) end,
            case when release is not null and amdgpu_driver_version is not null and not drivers_listed
                then format('AMD''s matrix lists no amdgpu driver for ROCm {}; cannot check driver {}', release,
                            amdgpu_driver_version) end,
            case when release is not null and amdgpu_driver_version is not null and drivers_listed and not driver_listed
                     and not regexp_matches(amdgpu_driver_version, '^(5\.[67]|6\.[0-4]|30\.\d+)(\.|$)')
                then format('amdgpu driver {} does not use AMD''s release numbering (e.g. 6.4.x, 30.10); cannot check it against ROCm {}',
                            amdgpu_driver_version, release) end
        ], lambda r: r is not null) as unknown_reasons
    from limits
),

final as (
    select
        gpu_model, rocm_version, os, kernel, amdgpu_driver_version, torch_version, engine,
        release,
        case
            when len(unsupported_reasons) > 0 then 'unsupported'
            when len(unknown_reasons) > 0 then 'unknown'
            else 'supported'
        end as verdict,
        unsupported_reasons || unknown_reasons as reasons,
        llvm_target, os_family, os_release, kernel_flavour
    from findings
)

select * from final
{%- endmacro %}

{% macro compat_checks(candidates) -%}
with candidates as (
    select * from {{ candidates }}
),

per_request as (
    select
        gpu_model, rocm_version, os, kernel, amdgpu_driver_version, torch_version, engine,
        list(release order by string_split(release, '.')::integer[]) filter (where release is not null) as rocm_releases,
        list(verdict order by string_split(release, '.')::integer[]) as verdicts,
        flatten(list(reasons order by string_split(release, '.')::integer[])) as reasons_in_release_order,
        any_value(llvm_target) as llvm_target,
        any_value(os_family) as os_family,
        any_value(os_release) as os_release,
        any_value(kernel_flavour) as kernel_flavour,
        string_agg(release || ' ' || verdict, ', ' order by string_split(release, '.')::integer[]) as verdict_per_release
    from candidates
    group by all
),

with_reasons as (
    -- Each reason once, in release order (first mention): list_distinct keeps no order, so the list
    -- could differ between builds of the same input.
    select
        *,
        list_filter(reasons_in_release_order,
                    lambda r, i: r is not null and list_position(reasons_in_release_order, r) = i) as all_reasons
    from per_request
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
    from with_reasons
)

select * from final
{%- endmacro %}
