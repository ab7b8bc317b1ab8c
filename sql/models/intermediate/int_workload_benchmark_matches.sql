-- One row per workload × benchmark run that measures the workload's unit and either declares the
-- workload or ran its model and precision: whether the run also matches the workload's engine,
-- input/output shape and SLOs, and — when it does not — what was close but mismatched.
-- Rules (docs/cost-model.md "Matching benchmark runs"): engine equal when the workload names one;
-- the run's scenario (when it states an MLPerf one) the workload's; mean tokens per request within
-- ±shape_tolerance_pct of the declared input/output tokens; every SLO met by the run's measured
-- latency (a latency the run does not report is not met).
with candidates as (
    select * from {{ ref('int_workload_run_candidates') }}
),

workloads as (
    select workload_id, slo_json from {{ ref('int_workloads') }}
),

latencies as (
    -- Every latency statistic a run reports, one row each (UNPIVOT drops the ones it lacks).
    unpivot (
        select run_id, columns('^(ttft|tpot|itl|e2el)_(mean|median|p90|p95|p99)_ms$') from {{ ref('int_current_benchmark_runs') }}
    ) on columns('_ms$') into name latency_column value latency_ms
),

plausibility as (
    -- Runs far above every published result for their GPU, model and precision (PERF_IMPLAUSIBLE).
    select run_id, is_perf_implausible and not perf_confirmed as is_perf_excluded, perf_detail
    from {{ ref('int_benchmark_plausibility') }}
),

slos as (
    select workload_id, slo.key as latency_column, (slo_json::json ->> slo.key)::double as max_ms
    from workloads, unnest(json_keys(slo_json::json)) as slo(key)
    where slo_json is not null
),

slo_results as (
    select
        c.workload_id, c.run_id,
        bool_and(coalesce(l.latency_ms <= s.max_ms, false)) as slo_met,
        string_agg(
            case
                when l.latency_ms is null then format('{} not reported (SLO ≤ {} ms)', s.latency_column, s.max_ms)
                when l.latency_ms > s.max_ms
                    then format('{} {} ms > SLO {} ms', s.latency_column, round(l.latency_ms, 3), s.max_ms)
            end, ', ' order by s.latency_column) as slo_detail
    from candidates as c
    join slos as s using (workload_id)
    left join latencies as l on l.run_id = c.run_id and l.latency_column = s.latency_column
    group by all
),

checked as (
    select
        c.*,
        c.workload_engine is null or coalesce(lower(c.run_engine) = c.workload_engine, c.is_declared)
            as engine_matches,
        -- Offline runs count for offline workloads only; server and interactive runs (interactive is
        -- the Server scenario under tighter latency bounds) for latency-bound ones, where the SLOs decide.
        c.workload_scenario is null or c.run_scenario is null
            or (c.workload_scenario = 'offline') = (c.run_scenario = 'offline') as scenario_matches,
        -- A declared dimension must be stated by the run (or vouched for by a declaring run) and within tolerance.
        case
            when c.workload_input_tokens is null then true
            when c.run_input_tokens is null then c.is_declared
            else abs(c.run_input_tokens - c.workload_input_tokens)
                <= c.workload_input_tokens * c.shape_tolerance_pct / 100
        end as input_matches,
        case
            when c.workload_output_tokens is null then true
            when c.run_output_tokens is null then c.is_declared
            else abs(c.run_output_tokens - c.workload_output_tokens)
                <= c.workload_output_tokens * c.shape_tolerance_pct / 100
        end as output_matches,
        coalesce(s.slo_met, true) as slo_met,
        s.slo_detail,
        coalesce(p.is_perf_excluded, false) as is_perf_excluded, p.perf_detail
    from candidates as c
    left join slo_results as s using (workload_id, run_id)
    left join plausibility as p using (run_id)
),

final as (
    select
        workload_id, run_id, run_provider, gpu_model, gpu_count, node_count, unit, units_per_hour,
        run_engine, run_input_tokens, run_output_tokens, is_declared,
        engine_matches, input_matches, output_matches, slo_met,
        workload_scenario, run_scenario, scenario_matches,
        case
            when not (engine_matches and scenario_matches and input_matches and output_matches) then 'mismatched'
            -- A run that matches but is far above every published result waits for confirmation.
            when is_perf_excluded then 'perf_implausible'
            when not slo_met then 'slo_not_met'
            else 'matched'
        end as match_status,
        nullif(concat_ws('; ',
            case when not engine_matches
                then format('engine {} ≠ {}', coalesce(run_engine, 'not stated'), workload_engine) end,
            case when not scenario_matches
                then format('scenario {} ≠ {} (workload scenario {})', run_scenario, workload_scenario,
                    workload_scenario_basis) end,
            case when not input_matches
                then format('mean input {} tokens, not within ±{}% of {}',
                    coalesce(round(run_input_tokens, 1)::varchar, 'not stated'), shape_tolerance_pct,
                    workload_input_tokens) end,
            case when not output_matches
                then format('mean output {} tokens, not within ±{}% of {}',
                    coalesce(round(run_output_tokens, 1)::varchar, 'not stated'), shape_tolerance_pct,
                    workload_output_tokens) end,
            case when not slo_met then slo_detail end,
            case when is_perf_excluded then perf_detail end
        ), '') as mismatch_detail
    from checked
)

select * from final
