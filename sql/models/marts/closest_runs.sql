-- One row per workload × one of its five closest benchmark runs and what about it does not match
-- (the evidence behind NO_BENCHMARK; int_workload_closest_runs).
select * exclude (inputs_hash) from {{ ref('int_workload_closest_runs') }}
