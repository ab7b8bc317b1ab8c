-- One row per workload × GPU model × GPU count: does the workload's model fit in memory, with the
-- bytes per GPU broken down, the verdict and reasons, and the fewest GPUs of that model that fit.
-- Workloads without a model are not memory-checked. Columns: docs/feasibility.md.
with fit as (
    select * from {{ ref('int_memory_fit') }}
),

final as (
    select * from fit
)

select * from final
