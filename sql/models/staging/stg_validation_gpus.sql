-- One row per device the probe enumerated on a validated host, marked physical or not (partitions
-- other than partition 0 are the same GPU), with a physical GPU's VRAM summed over its partitions.
with gpus as (
    select * from {{ source('raw', 'validation_gpus') }}
),

sized as (
    select
        *,
        coalesce(partition_id, '0') = '0' as is_physical,
        -- A partitioned GPU (several devices on one BDF) has the VRAM of all its partitions; unknown
        -- if any partition's size is (a zero size counts as not reported).
        case
            when bdf is null then nullif(vram_bytes, 0)
            when count(*) over same_gpu = count(nullif(vram_bytes, 0)) over same_gpu
                then sum(vram_bytes) over same_gpu
        end as physical_vram_bytes
    from gpus
    window same_gpu as (partition by validation_id, bdf)
)

select * from sized
