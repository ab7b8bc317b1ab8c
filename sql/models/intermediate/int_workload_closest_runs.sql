-- One row per workload × one of its five closest benchmark runs: every way the run does not match
-- the workload (unit, declared workload, model, precision, engine, input/output shape, SLO, and whether
-- any configuration of the workload has the run's GPU model and count), fewest mismatches first.
-- It explains NO_BENCHMARK: `provider-eval explain WORKLOAD` prints it (docs/cost-model.md).
-- Engine, shape and SLO verdicts come from int_workload_benchmark_matches (one rule, one place); a run
-- that is not a candidate there (another model or precision) is compared on its identity only, so runs
-- of one identity are compared once, through their first run (not every workload × every run: that was
-- 200M pairs at SCALE=large and filled the disk).
-- Rebuilt only when one of its inputs changed (a quote scrape changes none of them): the rows carry
-- the inputs' hash (macros/workload_cost_incremental.sql).
{%- set inputs = closest_runs_inputs() %}
{{ config(materialized='incremental', incremental_strategy='append',
          pre_hook="{{ delete_if_inputs_changed(closest_runs_inputs()) }}") }}

{% if inputs_unchanged(inputs) -%}
-- Its inputs are as they were: its rows stay, this build adds none.
select * from {{ this }} where false
{%- else %}
with workloads as (
    select * from {{ ref('int_workloads') }} where {{ inputs_changed() }}
),

runs as (
    -- Each run with the units it measures, before the cross join (a join per run, not per pair).
    select
        r.run_id, r.source_name, r.benchmark_format, r.provider, r.gpu_model, r.gpu_count, r.model_id,
        r.precision, r.engine, r.workload_id as run_workload_id, coalesce(u.units, []) as units
    from {{ ref('int_current_benchmark_runs') }} as r
    left join (
        select run_id, list(distinct unit order by unit) as units from {{ ref('int_benchmark_throughputs') }} group by all
    ) as u using (run_id)
),

candidates as (
    select workload_id, run_id, match_status, mismatch_detail from {{ ref('int_workload_benchmark_matches') }}
),

configurations as (
    select distinct workload_id, gpu_model, gpu_count from {{ ref('int_workload_configurations') }}
),

identified_runs as (
    -- Runs that compare alike with a workload they are not a candidate of: the same units, declared
    -- workload, model, precision, engine and GPU give the same mismatches.
    select
        *,
        dense_rank() over (order by units, run_workload_id, model_id, precision, engine, gpu_model, gpu_count)
            as identity_id
    from runs
),

numbered_runs as (
    select
        *,
        row_number() over (partition by identity_id order by run_id) as position_in_identity,
        count(*) over (partition by identity_id) as identity_runs
    from identified_runs
),

candidate_counts as (
    select c.workload_id, r.identity_id, count(*) as identity_candidates
    from candidates as c
    join numbered_runs as r using (run_id)
    group by all
),

pairs as not materialized (
    -- Each workload × the first run of every identity, compared as a non-candidate (it speaks for the
    -- identity's runs that are not the workload's candidates), and × each of its candidates.
    -- Not materialized: each reader below projects only the columns it needs.
    select
        w.workload_id, w.unit as workload_unit, w.model_id as workload_model_id,
        w.precision as workload_precision, w.engine as workload_engine,
        r.*,
        coalesce(r.run_workload_id = w.benchmark_workload_id, false) as is_declared,
        false as is_candidate, cc.identity_candidates,
        null::varchar as match_status, null::varchar as mismatch_detail,
        g.gpu_model is not null as gpu_offered
    from workloads as w
    cross join (select * from numbered_runs where position_in_identity = 1) as r
    left join candidate_counts as cc on cc.workload_id = w.workload_id and cc.identity_id = r.identity_id
    left join configurations as g
        on g.workload_id = w.workload_id and g.gpu_model = r.gpu_model and g.gpu_count = r.gpu_count
    where coalesce(cc.identity_candidates, 0) < r.identity_runs
    union all by name
    select
        w.workload_id, w.unit as workload_unit, w.model_id as workload_model_id,
        w.precision as workload_precision, w.engine as workload_engine,
        r.*,
        coalesce(r.run_workload_id = w.benchmark_workload_id, false) as is_declared,
        true as is_candidate, null::bigint as identity_candidates,
        c.match_status, c.mismatch_detail,
        g.gpu_model is not null as gpu_offered
    from candidates as c
    join workloads as w on w.workload_id = c.workload_id
    join numbered_runs as r on r.run_id = c.run_id
    left join configurations as g
        on g.workload_id = w.workload_id and g.gpu_model = r.gpu_model and g.gpu_count = r.gpu_count
),

flagged as not materialized (
    -- Which mismatches apply, as booleans: each is true exactly when its text below is not null
    -- (format() of a null argument is null), so counting them ranks every pair without a string.
    select
        *,
        coalesce(not list_contains(units, workload_unit), false) and workload_unit is not null as is_unit_mismatch,
        run_workload_id is not null and not is_declared as is_workload_mismatch,
        not is_declared and workload_model_id is not null and model_id is distinct from workload_model_id
            as is_model_mismatch,
        not is_declared and workload_precision is not null and precision is distinct from workload_precision
            as is_precision_mismatch,
        -- Candidates carry the matching model's own engine / shape / SLO verdicts.
        match_status is null and not is_declared and workload_engine is not null
            and lower(engine) is distinct from workload_engine as is_engine_mismatch,
        coalesce(match_status != 'matched', false) and mismatch_detail is not null as is_match_mismatch,
        not gpu_offered and gpu_count is not null and gpu_model is not null as is_gpu_mismatch
    from pairs
),

counted as not materialized (
    select
        *,
        is_unit_mismatch::integer + is_workload_mismatch::integer + is_model_mismatch::integer
            + is_precision_mismatch::integer + is_engine_mismatch::integer + is_match_mismatch::integer
            + is_gpu_mismatch::integer as mismatch_count
    from flagged
),

closest_identities as (
    -- Per workload, the closest N identities that hold none of its candidates: a run of any other such
    -- identity comes after the N first runs of these (a top-N aggregate; a window sorted every pair).
    select distinct workload_id, unnest(min_by(identity_id, {'mismatch_count': mismatch_count, 'run_id': run_id},
        (select closest_runs_per_workload from {{ ref('stg_conventions') }}))) as identity_id
    from counted
    where not is_candidate and identity_candidates is null
    group by workload_id
),

shortlisted_identities as (
    -- Those, and every identity that holds some of the workload's candidates (its first other runs are
    -- only known below).
    select c.*
    from counted as c
    semi join closest_identities as i on i.workload_id = c.workload_id and i.identity_id = c.identity_id
    where not c.is_candidate
    union all
    select * from counted where not is_candidate and identity_candidates is not null
),

scored as (
    -- Those identities' first runs by id (N, plus the workload's candidates among them), candidates set
    -- aside: each compares as its identity's first run did, and takes its own run id, source, format and
    -- provider (a column added to `runs` outside the identity must be taken here too). And every
    -- candidate, on its own verdicts.
    select s.* replace (r.run_id as run_id, r.source_name as source_name, r.benchmark_format as benchmark_format,
                        r.provider as provider)
    from shortlisted_identities as s
    join numbered_runs as r
        on r.identity_id = s.identity_id
        and r.position_in_identity <= (select closest_runs_per_workload from {{ ref('stg_conventions') }})
            + coalesce(s.identity_candidates, 0)
    anti join candidates as c on c.workload_id = s.workload_id and c.run_id = r.run_id
    union all by name
    select * from counted where is_candidate
),

nearest as (
    -- Each workload's closest runs (fewest mismatches, then run id) as a top-N aggregate.
    select distinct workload_id, unnest(min_by(run_id, {'mismatch_count': mismatch_count, 'run_id': run_id},
        (select closest_runs_per_workload from {{ ref('stg_conventions') }}))) as run_id
    from scored
    group by workload_id
),

compared as (
    -- The texts, for the closest runs only.
    select
        c.*,
        list_filter([
            case when is_unit_mismatch
                then format('unit: measures {}, not {}', coalesce(nullif(array_to_string(units, '/'), ''), 'nothing'),
                            workload_unit) end,
            case when is_workload_mismatch
                then format('workload: the run is declared for {}', run_workload_id) end,
            case when is_model_mismatch
                then format('model: {} ≠ {}', coalesce(model_id, 'not stated'), workload_model_id) end,
            case when is_precision_mismatch
                then format('precision: {} ≠ {}', coalesce(precision, 'not stated'), workload_precision) end,
            case when is_engine_mismatch
                then format('engine: {} ≠ {}', coalesce(engine, 'not stated'), workload_engine) end,
            case when is_match_mismatch then mismatch_detail end,
            case when is_gpu_mismatch
                then format('GPU: no configuration of this workload has {} × {}', gpu_count, gpu_model) end
        ], lambda m: m is not null) as mismatches
    from scored as c
    semi join nearest as n on n.workload_id = c.workload_id and n.run_id = c.run_id
),

final as (
    select
        workload_id,
        row_number() over (partition by workload_id order by len(mismatches), run_id) as closeness_rank,
        run_id, source_name, benchmark_format, provider, gpu_model, gpu_count, model_id, precision, engine,
        len(mismatches) as mismatch_count,
        mismatches,
        ({{ inputs_fingerprint(inputs) }}) as inputs_hash
    from compared
    qualify closeness_rank <= (select closest_runs_per_workload from {{ ref('stg_conventions') }})
)

select * from final
{%- endif %}
