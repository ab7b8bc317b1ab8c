-- One row per workload × utilisation scenario: the workload's declared utilisation ('declared'), and
-- each sensitivity utilisation of data/reference/conventions.csv (30 / 60 / 100 %: '30pct' …), at
-- which the whole cost model is re-run for ranking_sensitivity.
with workloads as (
    select workload_id, utilisation from {{ ref('int_workloads') }}
),

sensitivity as (
    select unnest(sensitivity_utilisations) as utilisation from {{ ref('stg_conventions') }}
),

final as (
    select workload_id, 'declared' as utilisation_scenario, utilisation::decimal(9, 6) as utilisation_applied
    from workloads
    union all
    select w.workload_id, format('{}pct', round(s.utilisation * 100)::integer), s.utilisation::decimal(9, 6)
    from workloads as w
    cross join sensitivity as s
)

select * from final
