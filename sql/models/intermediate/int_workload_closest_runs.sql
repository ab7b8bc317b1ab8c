-- One row per workload × one of its five closest benchmark runs: every way the run does not match
-- the workload (unit, declared workload, model, precision, engine, input/output shape, SLO, and whether
-- any configuration of the workload has the run's GPU model and count), fewest mismatches first.
-- It explains NO_BENCHMARK: `provider-eval explain WORKLOAD` prints it (docs/cost-model.md).
-- Engine, shape and SLO verdicts come from int_workload_benchmark_matches (one rule, one place); a run
-- that is not a candidate there (another model or precision) is compared on its identity only.
with workloads as (
    select * from {{ ref('int_workloads') }}
),

runs as (
    select run_id, source_name, benchmark_format, provider, gpu_model, gpu_count, model_id, precision,
           engine, workload_id as run_workload_id
    from {{ ref('int_current_benchmark_runs') }}
),

units as (
    select run_id, list(distinct unit order by unit) as units from {{ ref('int_benchmark_throughputs') }} group by all
),

candidates as (
    select workload_id, run_id, match_status, mismatch_detail from {{ ref('int_workload_benchmark_matches') }}
),

configurations as (
    select distinct workload_id, gpu_model, gpu_count from {{ ref('int_workload_configurations') }}
),

pairs as (
    select
        w.workload_id, w.unit as workload_unit, w.model_id as workload_model_id,
        w.precision as workload_precision, w.engine as workload_engine,
        r.*, coalesce(u.units, []) as units,
        coalesce(r.run_workload_id = w.benchmark_workload_id, false) as is_declared,
        c.match_status, c.mismatch_detail,
        g.gpu_model is not null as gpu_offered
    from workloads as w
    cross join runs as r
    left join units as u using (run_id)
    left join candidates as c on c.workload_id = w.workload_id and c.run_id = r.run_id
    left join configurations as g
        on g.workload_id = w.workload_id and g.gpu_model = r.gpu_model and g.gpu_count = r.gpu_count
),

compared as (
    select
        *,
        list_filter([
            case when not list_contains(units, workload_unit)
                then format('unit: measures {}, not {}', coalesce(nullif(array_to_string(units, '/'), ''), 'nothing'),
                            workload_unit) end,
            case when run_workload_id is not null and not is_declared
                then format('workload: the run is declared for {}', run_workload_id) end,
            case when not is_declared and workload_model_id is not null
                    and model_id is distinct from workload_model_id
                then format('model: {} ≠ {}', coalesce(model_id, 'not stated'), workload_model_id) end,
            case when not is_declared and workload_precision is not null
                    and precision is distinct from workload_precision
                then format('precision: {} ≠ {}', coalesce(precision, 'not stated'), workload_precision) end,
            -- Candidates carry the matching model's own engine / shape / SLO verdicts.
            case when match_status is null and not is_declared and workload_engine is not null
                    and lower(engine) is distinct from workload_engine
                then format('engine: {} ≠ {}', coalesce(engine, 'not stated'), workload_engine) end,
            case when match_status != 'matched' then mismatch_detail end,
            case when not gpu_offered
                then format('GPU: no configuration of this workload has {} × {}', gpu_count, gpu_model) end
        ], lambda m: m is not null) as mismatches
    from pairs
),

final as (
    select
        workload_id,
        row_number() over (partition by workload_id order by len(mismatches), run_id) as closeness_rank,
        run_id, source_name, benchmark_format, provider, gpu_model, gpu_count, model_id, precision, engine,
        len(mismatches) as mismatch_count,
        mismatches
    from compared
    qualify closeness_rank <= (select closest_runs_per_workload from {{ ref('stg_conventions') }})
)

select * from final
