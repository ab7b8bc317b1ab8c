-- One row per NVIDIA-side check of every decidable validation (before numbering): the driver and CUDA
-- versions found (a note), GPUs PyTorch (CUDA) can use against those nvidia-smi lists, uncorrected ECC
-- errors, and the AMD-only software-stack check marked not applicable on an NVIDIA quote.
-- Ephemeral: a step of int_validation_checks (inlined there as a CTE).
{{ config(materialized='ephemeral') }}

with facts as (
    select * from {{ ref('int_validation_facts') }}
),

ecc as (
    -- Uncorrected ECC errors since the driver loaded, per physical GPU that reports the counter.
    select validation_id, count(*) as physical_gpu_count, count(ecc_uncorrected_volatile) as reported,
        list('(' || coalesce(gpu_index::varchar, 'None') || ', ' || ecc_uncorrected_volatile || ')' order by gpu_index)
            filter (where ecc_uncorrected_volatile > 0) as bad
    from {{ ref('stg_validation_gpus') }}
    where is_physical
    group by validation_id
)

select validation_id, 62 as check_order, 0 as tie, 'software_stack' as check_name, 'note' as status,
    null::varchar as measured, null::varchar as expected,
    'not applicable: the compatibility matrix (compat_checks) is AMD''s ROCm matrix' as message,
    'compat_checks holds AMD''s ROCm matrix only' as source_of_rule
from facts where nvidia_quote

union all
-- nvidia_stack: what was found, as a note (no sourced driver/CUDA floor per GPU is in data/reference).
select validation_id, 63, 0, 'nvidia_stack', 'note',
    concat_ws(', ', 'driver ' || left(nvidia_driver_version, 40), 'CUDA (driver) ' || left(cuda_driver_version, 40),
              'CUDA toolkit (nvcc) ' || left(nvcc_cuda_version, 40), 'torch CUDA ' || left(torch_cuda_version, 40)),
    null,
    coalesce('found ' || nullif(concat_ws(', ', 'driver ' || left(nvidia_driver_version, 40),
                                          'CUDA (driver) ' || left(cuda_driver_version, 40),
                                          'CUDA toolkit (nvcc) ' || left(nvcc_cuda_version, 40),
                                          'torch CUDA ' || left(torch_cuda_version, 40)), ''),
             'no driver or CUDA version reported (nvidia-smi banner, nvcc, torch.version.cuda)'),
    'nvidia-smi banner, nvcc --version, torch.version.cuda: recorded, no floor applies'
from facts where nvidia_quote

union all
-- visible_gpus (NVIDIA): a container given fewer devices, or a CUDA build the driver cannot run (none).
select validation_id, 64, 0, 'visible_gpus', case when torch_device_count = 0 then 'fail' else 'inconclusive' end,
    torch_device_count::varchar, physical_gpu_count::varchar,
    'PyTorch (CUDA ' || left(torch_cuda_version, 20) || ') sees ' || torch_device_count || ' of the ' || physical_gpu_count
        || ' GPU(s) nvidia-smi lists',
    'project rule docs/validation.md (visible_gpus): torch.cuda.device_count() vs the GPUs nvidia-smi lists'
from facts
where nvidia_quote and torch_importable and torch_cuda_version is not null and torch_device_count is not null
    and physical_gpu_count > 0 and torch_device_count < physical_gpu_count

union all
-- ecc: any uncorrected error since the driver loaded fails; a pass needs every GPU's counter at 0.
select e.validation_id, 65, 0, 'ecc', case when len(e.bad) > 0 then 'fail' else 'pass' end,
    case when len(e.bad) > 0 then array_to_string(e.bad, ', ') else '0 on ' || e.physical_gpu_count || ' GPU(s)' end, '0',
    case when len(e.bad) > 0 then 'uncorrected ECC errors since the driver loaded (ecc.errors.uncorrected.volatile.total): ['
            || array_to_string(e.bad, ', ') || ']'
        else 'no uncorrected ECC errors on any GPU since the driver loaded' end,
    'nvidia-smi ecc.errors.uncorrected.volatile.total (docs/validation.md#ecc): an uncorrected error is a failing GPU'
from ecc as e
join facts as f using (validation_id)
where len(e.bad) > 0 or (e.physical_gpu_count > 0 and e.reported = e.physical_gpu_count)
