-- One row per software stack check of every decidable validation (before numbering): the ROCm release
-- against the quoted GPU's floor, and the GPUs PyTorch sees against the devices the tools list.
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
from facts where not nvidia_quote and min_rocm_version is not null and gpus > 0

union all
select validation_id, 60, 0, 'rocm', 'note', null::varchar, null::varchar,
    'not applicable: an NVIDIA host runs CUDA, not ROCm (validation_rocm_floors.csv covers AMD GPUs only)',
    'validation_rocm_floors.csv covers AMD GPUs only'
from facts where nvidia_quote

union all
-- visible_gpus (AMD quotes; NVIDIA's is recorded by verdict.py): PyTorch sees fewer devices than the
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
