-- Every run a measured ranked configuration cites matches its workload in every rule (engine, shape,
-- SLOs): a run that missed an SLO or mismatched the shape is never evidence for a ranking.
-- Offers of one configuration cite the same list of runs: each distinct list is checked once (5,212
-- lists for 503,311 rankings at SCALE=large), then its offending runs are named per ranking. Checking
-- all 50M cited run ids one by one took 8–9 s of a 15 s incremental refresh under the build's memory limit.
with cited_lists as (
    select distinct workload_id, benchmark_run_ids
    from {{ ref('rankings') }}
),

matched as (
    select workload_id, run_id from {{ ref('int_workload_benchmark_matches') }} where match_status = 'matched'
),

offending as (
    select l.workload_id, l.benchmark_run_ids, c.run_id
    from cited_lists as l, unnest(l.benchmark_run_ids) as c(run_id)
    anti join matched as m on m.workload_id = l.workload_id and m.run_id = c.run_id
),

final as (
    select r.workload_id, r.offer_id, o.run_id
    from {{ ref('rankings') }} as r
    join offending as o on o.workload_id = r.workload_id and o.benchmark_run_ids = r.benchmark_run_ids
)

select * from final
