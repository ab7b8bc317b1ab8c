-- One row per workload × benchmark run that measures the workload's unit and either declares the
-- workload or ran its model and precision (the candidates int_workload_benchmark_matches checks),
-- with the workload's scenario (stated or implied) and the shape the run served.
{{ config(materialized='ephemeral') }}

with workloads as (
    select
        *,
        -- The scenario a workload runs under: stated, else implied (docs/cost-model.md "Scenario"):
        -- latency SLOs mean requests arrive over time (server); inference without SLOs is throughput-
        -- bound batch work (offline); batch jobs and training have no serving scenario (null: any run).
        coalesce(scenario, case when slo_json is not null then 'server' when kind = 'inference' then 'offline' end)
            as workload_scenario,
        case when scenario is not null then 'stated' when slo_json is not null then 'implied by its SLOs'
            when kind = 'inference' then 'implied: inference without SLOs' end as workload_scenario_basis
    from {{ ref('int_workloads') }}
),

throughputs as (
    -- Each run once per unit it measures (its own unit, and requests / tokens from its rates).
    select * from {{ ref('int_benchmark_throughputs') }} where units_per_hour > 0
),

runs as (
    select
        run_id, node_count,
        -- MLPerf's LLM load scenarios; other text (InferenceX's dataset label 'agentic-coding') states none.
        case when lower(scenario) in ('offline', 'server', 'interactive') then lower(scenario) end
            as run_scenario,
        -- The shape a run served: measured mean tokens per request, else the lengths it was configured with.
        coalesce(mean_input_tokens, input_len_tokens) as run_input_tokens,
        coalesce(mean_output_tokens, output_len_tokens) as run_output_tokens
    from {{ ref('int_current_benchmark_runs') }}
),

candidates as (
    select
        w.workload_id, w.engine as workload_engine, w.input_tokens as workload_input_tokens,
        w.output_tokens as workload_output_tokens, w.shape_tolerance_pct,
        w.workload_scenario, w.workload_scenario_basis, r.run_scenario,
        t.run_id, t.provider as run_provider, t.gpu_model, t.gpu_count, t.unit, t.units_per_hour,
        t.engine as run_engine, r.node_count, r.run_input_tokens, r.run_output_tokens,
        -- A run that names this workload vouches for what it does not state itself.
        coalesce(t.workload_id = w.benchmark_workload_id, false) as is_declared
    from workloads as w
    join throughputs as t
        on t.unit = w.unit
        and (
            t.workload_id = w.benchmark_workload_id
            -- A run that names no workload measures a model: match it on model and precision.
            or (t.workload_id is null and t.model_id = w.model_id and t.precision is not distinct from w.precision)
        )
    join runs as r using (run_id)
)

select * from candidates
