-- One row per software stack check of every decidable validation (before numbering): the ROCm release
-- against the quoted GPU's floor, the measured stack (ROCm, OS, kernel, PyTorch) against AMD's
-- compatibility matrix (int_compat_checks, the rules of compat_checks), the GPUs PyTorch sees against
-- the devices the tools list, and each GPU's gfx target against the ROCm release PyTorch was built with
-- (rocm_gpu_targets).
-- Ephemeral: a step of int_validation_checks (inlined there as a CTE); a table of its own would cost a
-- dbt node per build for a few rows.
{{ config(materialized='ephemeral') }}

with facts as (
    select * from {{ ref('int_validation_facts') }}
)

-- rocm: the ROCm release against the first one supporting the quoted GPU (AMD quotes).
select validation_id, 60 as check_order, 0 as tie, 'rocm' as check_name,
    case when rocm_have is null then 'inconclusive' when rocm_have < rocm_need then 'fail' else 'pass' end as status,
    probe_rocm_version as measured, '>= ' || min_rocm_version as expected,
    case when rocm_have is null then 'ROCm version not found (/opt/rocm/.info/version, amd-smi version)'
        when rocm_have < rocm_need
            then 'ROCm ' || probe_rocm_version || ' is older than ' || min_rocm_version
                || ', the first release supporting ' || quoted_gpu_model
        else 'ROCm ' || probe_rocm_version || ' (≥ ' || min_rocm_version || ' for ' || quoted_gpu_model || ')' end as message,
    'validation_rocm_floors.csv: ' || rocm_floor_source as source_of_rule
from facts where not nvidia_quote and min_rocm_version is not null and physical_gpu_count > 0

union all
select validation_id, 60, 0, 'rocm', 'note', null::varchar, null::varchar,
    'not applicable: an NVIDIA host runs CUDA, not ROCm (validation_rocm_floors.csv covers AMD GPUs only)',
    'validation_rocm_floors.csv covers AMD GPUs only'
from facts where nvidia_quote

union all
-- software_stack (AMD quotes whose GPUs are all the quoted model): the measured stack through AMD's matrix.
-- Unknown means the shipped matrix cannot say (not that the host is wrong): a note, not a verdict.
select validation_id, 62, 0, 'software_stack',
    case verdict when 'supported' then 'pass' when 'unsupported' then 'fail' else 'note' end,
    concat_ws(', ', coalesce('ROCm ' || rocm_version, 'no ROCm'), coalesce(os, 'no OS'),
        coalesce('kernel ' || kernel, 'no kernel'), 'PyTorch ' || torch_version),
    'supported by AMD''s compatibility matrix',
    verdict || ': ' || array_to_string(reasons, '; '),
    'AMD''s compatibility matrix (data/reference/rocm_*.csv), by the rules of compat_checks (macros/compat_rules.sql)'
from {{ ref('int_validation_compat_checks') }}

union all
-- visible_gpus (AMD quotes; NVIDIA's is in int_validation_nvidia_checks): PyTorch sees fewer devices than the
-- tools list, e.g. a container given some of the node's GPUs. None at all: nothing can run.
select validation_id, 64, 0, 'visible_gpus',
    case when torch_device_count = 0 then 'fail' else 'inconclusive' end,
    torch_device_count::varchar, listed_devices::varchar,
    'PyTorch (' || coalesce('HIP ' || torch_hip_version, 'torch ' || torch_version, 'torch') || ') sees '
        || torch_device_count || ' of the ' || listed_devices || ' device(s) '
        || coalesce(gpu_source, 'the tools') || ' lists',
    'project rule docs/validation.md (visible_gpus), as for NVIDIA hosts: torch.cuda.device_count() vs the devices the tools list'
from facts
where not nvidia_quote and torch_importable and torch_cuda_version is null and torch_device_count is not null
    and torch_device_count < listed_devices

union all
-- gfx_target: each GPU's LLVM target against the ROCm release the installed PyTorch was built with
-- (torch.version.hip major.minor). A target that release does not list has no kernels in the build:
-- the first kernel fails (a gfx950 host with a wheel built for ROCm 6.x).
select t.validation_id, 66, 0, 'gfx_target',
    case when not t.release_listed then 'note' when len(t.missing) > 0 then 'fail' else 'pass' end,
    array_to_string(t.targets, ', '), 'listed for ROCm ' || t.hip_release,
    case when not t.release_listed
            then 'PyTorch was built with HIP ' || t.torch_hip_version || '; ROCm ' || t.hip_release
                || ' is not in rocm_gpu_targets.csv, so its GPU targets cannot be checked'
        when len(t.missing) > 0
            then 'PyTorch was built with HIP ' || t.torch_hip_version || ' (ROCm ' || t.hip_release || '), which does not list '
                || array_to_string(t.missing, ', ') || ': the build has no kernels for this GPU'
        else 'PyTorch was built with HIP ' || t.torch_hip_version || ' (ROCm ' || t.hip_release || '), which lists '
            || array_to_string(t.targets, ', ') end,
    'rocm_gpu_targets.csv (AMD ROCm compatibility matrix, supported LLVM targets per release)'
from (
    select f.validation_id, f.torch_hip_version, r.hip_release, list_sort(list(g.gfx)) as targets,
        exists (select 1 from {{ source('ref', 'rocm_gpu_targets') }} as x
                where x.rocm_version like r.hip_release || '.%') as release_listed,
        coalesce(list_sort(list(g.gfx) filter (where x.llvm_target is null)), []) as missing
    from facts as f
    cross join lateral (select regexp_extract(f.torch_hip_version, '^\s*(\d+\.\d+)', 1) as hip_release) as r
    join (
        select distinct validation_id, gfx_target as gfx from {{ ref('stg_validation_gpus') }}
        where is_physical and gfx_target is not null
    ) as g using (validation_id)
    left join (
        select distinct regexp_extract(rocm_version, '^(\d+\.\d+)', 1) as release, llvm_target
        from {{ source('ref', 'rocm_gpu_targets') }}
    ) as x on x.release = r.hip_release and x.llvm_target = g.gfx
    where not f.nvidia_quote and f.torch_importable and r.hip_release != ''
    group by all
) as t
