-- One row per catalog GPU model: its memory in bytes and how that is known, by one rule for every GPU
-- (docs/feasibility.md#gpu-memory): measured, measured on a same-memory twin, or marketed GiB.
with catalog as (
    select gpu_model, memory_gb_marketed, memory_type, llvm_target from {{ source('ref', 'gpus') }}
),

measured as (
    select m.*, c.memory_gb_marketed, c.memory_type, c.llvm_target
    from {{ source('ref', 'gpu_memory') }} as m
    join catalog as c using (gpu_model)
),

final as (
    -- Its own measured byte count; else the count measured on a GPU with the same memory (marketed size,
    -- memory type, gfx target: the same HBM/GDDR on the same die reports alike); else marketed GB × 2^30.
    select
        c.gpu_model,
        coalesce(own.memory_bytes, twin.memory_bytes, (c.memory_gb_marketed * 1073741824)::bigint) as memory_bytes,
        case
            when own.gpu_model is not null then 'measured'
            when twin.gpu_model is not null then 'measured_same_memory'
            when c.memory_gb_marketed is not null then 'marketed_gib'
        end as memory_basis,
        case
            when own.gpu_model is not null then format('{}: {}', own.measured_by, own.source)
            when twin.gpu_model is not null then format('measured on {} (same {} GB {}, {}) by {}: {}', twin.gpu_model,
                c.memory_gb_marketed, c.memory_type, c.llvm_target, twin.measured_by, twin.source)
            when c.memory_gb_marketed is not null then format('marketed {} GB {} read as {} x 2^30 bytes (gpus.csv); no measured size recorded',
                c.memory_gb_marketed, c.memory_type, c.memory_gb_marketed)
        end as memory_source
    from catalog as c
    left join measured as own on own.gpu_model = c.gpu_model
    left join measured as twin
        on own.gpu_model is null and twin.gpu_model <> c.gpu_model
        and twin.memory_gb_marketed = c.memory_gb_marketed and twin.memory_type = c.memory_type
        and twin.llvm_target = c.llvm_target
    -- Several twins measured: the smallest count (the conservative one), then by name.
    qualify row_number() over (partition by c.gpu_model order by twin.memory_bytes, twin.gpu_model) = 1
)

select * from final
