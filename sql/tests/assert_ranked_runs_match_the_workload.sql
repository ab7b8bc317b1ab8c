-- Every run a measured ranked configuration cites matches its workload in every rule (engine, shape,
-- SLOs): a run that missed an SLO or mismatched the shape is never evidence for a ranking.
with cited as (
    select workload_id, offer_id, unnest(benchmark_run_ids) as run_id
    from {{ ref('rankings') }}
),

matched as (
    select workload_id, run_id from {{ ref('int_workload_benchmark_matches') }} where match_status = 'matched'
),

final as (
    select c.workload_id, c.offer_id, c.run_id
    from cited as c
    anti join matched as m using (workload_id, run_id)
)

select * from final
