-- One row per compatibility request × ROCm release it may mean ('6.4' means every 6.4.x release;
-- none when the version is missing or unknown), with every problem found, in plain words: each fact
-- of int_compat_release_facts that makes the stack unsupported, or leaves it unknown.
with limits as (
    select * from {{ ref('int_compat_release_facts') }}
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