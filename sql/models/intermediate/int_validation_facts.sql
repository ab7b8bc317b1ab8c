-- One row per decidable validation: the record, the quoted GPU's catalog facts, what its physical GPUs
-- were identified as (int_validation_gpu_identities), their VRAM, SR-IOV virtual functions, the
-- devices the tools listed, and the ROCm release against the quoted GPU's floor: what the checks test.
with catalog as (
    select * from {{ ref('int_validation_catalog') }}
),

quoted as (
    -- Only a decidable probe document is checked (int_validation_run_checks says why another is not).
    select v.*, coalesce(c.vendor = 'NVIDIA', false) as nvidia_quote, c.memory_gb_marketed,
        c.source as catalog_source
    from {{ ref('stg_hardware_validations') }} as v
    left join catalog as c on c.gpu_model = v.quoted_gpu_model
    where v.probe_decidable
),

physical as (
    select g.* from {{ ref('stg_validation_gpus') }} as g where g.is_physical
),

per_validation as (
    select
        q.validation_id,
        count(i.validation_id) as physical_gpu_count,
        list_sort(list(distinct i.found_model) filter (where i.found_model is not null)) as found_models,
        count(i.validation_id) > 0 and count(*) filter (where i.vendor is distinct from 'NVIDIA') = 0 as all_nvidia,
        -- What the tools' marketing names read as (never the identity: a VF or a renamed board).
        list_sort(list(distinct i.name_gpu_model) filter (where i.vendor is distinct from 'NVIDIA'
                                                         and i.name_gpu_model is not null)) as named_models
    from quoted as q
    left join {{ ref('int_validation_gpu_identities') }} as i using (validation_id)
    group by q.validation_id
),

virtual_functions as (
    -- Physical GPUs whose PCI device id is a catalogued SR-IOV virtual function.
    select p.validation_id, list(p.pci_device_id order by p.gpu_index) as vf_ids, count(*) as vfs
    from physical as p
    where exists (select 1 from catalog as c where list_contains(c.vf_device_ids, p.pci_device_id))
    group by p.validation_id
),

listed as (
    -- Devices the tools enumerated (partitions count: PyTorch sees each partition as a device).
    select validation_id, count(*) filter (where enumerated_by = 'tools') as devices, count(*) as all_devices
    from {{ ref('stg_validation_gpus') }} group by validation_id
),

vram as (
    select validation_id, count(*) as physical_gpu_count, count(physical_vram_bytes) as sized, min(physical_vram_bytes) as smallest
    from physical
    group by validation_id
)

select
    q.*, pv.physical_gpu_count, coalesce(pv.found_models, []) as found_models, pv.all_nvidia,
    coalesce(pv.named_models, []) as named_models,
    vr.sized as vram_sized, vr.smallest as vram_smallest, coalesce(vf.vfs, 0) as vfs, vf.vf_ids,
    coalesce(ls.devices, 0) as listed_devices, coalesce(ls.all_devices, 0) as logical_devices,
    list_sort(list_distinct(list_concat(q.compute_partitions, q.memory_partitions))) as probe_partition_modes,
    floor(q.memory_gb_marketed * 1e9 * conv.validation_vram_tolerance)::bigint as vram_floor_bytes,
    f.min_rocm_version, f.source as rocm_floor_source,
    -- Versions compared as (major, minor, patch) lists: 6.10 sorts after 6.9.
    case when regexp_matches(q.probe_rocm_version, '^\s*\d+\.\d+') then [regexp_extract(q.probe_rocm_version, '^\s*(\d+)', 1)::int, regexp_extract(q.probe_rocm_version, '^\s*\d+\.(\d+)', 1)::int,
        coalesce(nullif(regexp_extract(q.probe_rocm_version, '^\s*\d+\.\d+\.(\d+)', 1), ''), '0')::int] end as rocm_have,
    case when regexp_matches(f.min_rocm_version, '^\s*\d+\.\d+') then [regexp_extract(f.min_rocm_version, '^\s*(\d+)', 1)::int, regexp_extract(f.min_rocm_version, '^\s*\d+\.(\d+)', 1)::int,
        coalesce(nullif(regexp_extract(f.min_rocm_version, '^\s*\d+\.\d+\.(\d+)', 1), ''), '0')::int] end as rocm_need
from quoted as q
cross join (select validation_vram_tolerance from {{ ref('stg_conventions') }}) as conv
join per_validation as pv using (validation_id)
left join vram as vr using (validation_id)
left join virtual_functions as vf using (validation_id)
left join listed as ls using (validation_id)
left join {{ source('ref', 'validation_rocm_floors') }} as f on f.gpu_model = q.quoted_gpu_model
