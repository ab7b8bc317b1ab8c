-- One row per partitioning check of every decidable validation (before numbering): compute/memory
-- partition modes other than SPX/NPS1 or more logical devices than GPUs (AMD), and MIG (NVIDIA):
-- memory per device and throughput then differ from what the quote's benchmarks assume.
-- Ephemeral: a step of int_validation_checks (inlined there as a CTE).
{{ config(materialized='ephemeral') }}

with facts as (
    select * from {{ ref('int_validation_facts') }}
),

devices as (
    -- Every device enumerated (partitions count), and the physical GPUs with MIG enabled.
    select validation_id, count(*) as devices,
        list(gpu_index order by gpu_index) filter (where is_physical and lower(mig_mode) = 'enabled') as mig_gpus
    from {{ ref('stg_validation_gpus') }}
    group by validation_id
),

modes as (
    select f.validation_id, f.physical_gpu_count, coalesce(d.devices, 0) as devices, d.mig_gpus,
        list_sort(list_distinct(list_concat(f.compute_partitions, f.memory_partitions))) as partition_modes,
        len(list_filter(f.compute_partitions, lambda m: m != 'SPX')) > 0 as compute_partitioned
    from facts as f
    left join devices as d using (validation_id)
)

select validation_id, 40 as check_order, 0 as tie, 'partition' as check_name, 'inconclusive' as status,
    coalesce(nullif(array_to_string(partition_modes, ', '), ''), 'mode unknown') || '; ' || devices || ' logical device(s)'
        as measured,
    'SPX/NPS1, one device per GPU' as expected,
    'GPUs are partitioned (' || coalesce(nullif(array_to_string(partition_modes, ', '), ''), 'mode unknown') || ', '
        || devices || ' logical devices on ' || physical_gpu_count || ' GPU(s)); benchmarks assume SPX/NPS1' as message,
    'amd-smi partition / rocm-smi (docs/validation.md#partition): the catalog memory and the benchmarks are per whole GPU'
        as source_of_rule
from modes where compute_partitioned or devices > physical_gpu_count

union all
select validation_id, 40, 1, 'partition', 'inconclusive', 'MIG enabled on ' || len(mig_gpus) || ' GPU(s)', 'MIG disabled',
    'MIG mode is Enabled on GPU(s) [' || array_to_string(mig_gpus, ', ') || ']: CUDA sees MIG instances, not whole GPUs; '
        || 'memory and benchmarks assume whole GPUs',
    'nvidia-smi mig.mode.current (docs/validation.md#partition): the catalog memory and the benchmarks are per whole GPU'
from modes where len(mig_gpus) > 0
