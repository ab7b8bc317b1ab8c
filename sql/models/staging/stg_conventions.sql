-- One row: every convention of the cost model and the quality heuristics as a typed column (lists
-- for the conventions that are sets of values), from data/reference/conventions.csv, where each
-- value carries its source. Models cross join this row instead of repeating the numbers. (The CSV
-- column `value` is read as a number: each convention is cast to its type here, once.)
with conventions as (
    select name, value from {{ source('ref', 'conventions') }}
),

final as (
    select
        -- Monthly prices and monthly billing: hours in a month (8760 / 12).
        any_value(value::integer) filter (where name = 'hours_per_month') as hours_per_month,
        any_value(value::bigint * 3600) filter (where name = 'hours_per_month') as seconds_per_month,
        any_value(value::bigint * 3600000000) filter (where name = 'hours_per_month') as microseconds_per_month,
        -- The utilisations the whole cost model is re-run at (ranking_sensitivity).
        list(value::decimal(9, 6) order by value::decimal(9, 6)) filter (where name = 'sensitivity_utilisation')
            as sensitivity_utilisations,
        -- GPU counts every catalog GPU is memory-checked at (besides every count an offer rents).
        list(value::integer order by value::integer) filter (where name = 'fit_request_gpu_count')
            as fit_request_gpu_counts,
        -- GPU counts searched for memory_fit.min_gpus (besides the requested count).
        list(value::integer order by value::integer) filter (where name = 'min_gpus_candidate_count')
            as min_gpus_candidate_counts,
        -- GPUs per node that raise no GPU_COUNT_UNUSUAL warning.
        list(value::integer order by value::integer) filter (where name = 'usual_gpus_per_node')
            as usual_gpus_per_node,
        -- validate-host's vram check: the share of the marketed GB a GPU must report (int_validation_facts).
        any_value(value::double) filter (where name = 'validation_vram_tolerance') as validation_vram_tolerance,
        -- The market comparison of offers (SCOPE_SUSPECT, PRICE_OUTLIER).
        any_value(value::integer) filter (where name = 'price_outlier_min_peers') as price_outlier_min_peers,
        any_value(value::integer) filter (where name = 'price_outlier_robust_sigmas') as price_outlier_robust_sigmas,
        any_value(value::integer) filter (where name = 'price_outlier_min_factor') as price_outlier_min_factor,
        any_value(value::decimal(9, 4)) filter (where name = 'scope_ratio_low') as scope_ratio_low,
        any_value(value::decimal(9, 4)) filter (where name = 'scope_ratio_high') as scope_ratio_high,
        any_value(value::decimal(9, 4)) filter (where name = 'mad_to_sigma') as mad_to_sigma,
        -- Benchmark runs shown per workload as the evidence behind NO_BENCHMARK.
        any_value(value::integer) filter (where name = 'closest_runs_per_workload') as closest_runs_per_workload
    from conventions
)

select * from final
