-- One row per workload × measured configuration (provider scope, GPU model, GPU count, node count
-- the runs state): the median throughput of the runs that match every rule, with their run ids as
-- evidence, and the runs that came close (SLO missed, or engine / shape mismatched) with why.
with matches as (
    select * from {{ ref('int_workload_benchmark_matches') }}
),

final as (
    select
        workload_id,
        -- A run measured at a provider is evidence for that provider's offers only;
        -- a run with no provider speaks for any host with this GPU model and count.
        run_provider,
        gpu_model,
        gpu_count,
        -- Nodes the runs spanned, when they say (null: not stated).
        node_count,
        -- Several matching runs: their median (robust to one outlier run).
        median(units_per_hour) filter (where match_status = 'matched') as units_per_hour,
        count(*) filter (where match_status = 'matched') as benchmark_runs,
        coalesce(list(run_id order by run_id) filter (where match_status = 'matched'), [])
            as benchmark_run_ids,
        coalesce(list(run_id order by run_id) filter (where match_status = 'slo_not_met'), [])
            as slo_failed_run_ids,
        -- Matching runs far above every published result, not counted until confirmed (PERF_IMPLAUSIBLE).
        coalesce(list(run_id order by run_id) filter (where match_status = 'perf_implausible'), [])
            as perf_implausible_run_ids,
        string_agg(run_id || ': ' || mismatch_detail, ' | ' order by run_id)
            filter (where match_status != 'matched') as mismatch_detail
    from matches
    group by all
)

select * from final
