-- One row per deep-tool check of every decidable validation (before numbering): rccl-tests
-- all_reduce_perf's in-place bus bandwidth against the 8-GPU floor in acceptance_thresholds (when the
-- run matches the floor's conditions: 8 GPUs quoted and used, 8 GiB messages), and RVS gst's own
-- met/not-met per result, and on an AMD quote TransferBench a2a, rocBLAS FP32 4000³ and BabelStream Triad
-- against their acceptance_thresholds floors (a note when the tool is not installed, or no floor exists for
-- the quoted model). Only when --deep ran the tools.
-- Ephemeral: a step of int_validation_checks (inlined there as a CTE).
{{ config(materialized='ephemeral') }}

with facts as (
    select f.*, t.pass_at_or_above as rccl_floor, t.source as rccl_floor_source,
        regexp_replace(t.pass_at_or_above::varchar, '\.0$', '') as rccl_floor_text
    from {{ ref('int_validation_facts') }} as f
    left join {{ source('ref', 'acceptance_thresholds') }} as t
        on t.gpu_model = f.quoted_gpu_model and t."check" = 'rccl_allreduce_8gpu'
),

benchmarks as (
    -- One row per AMD cluster-validation benchmark --deep attempted: what it measured and its floor's check name.
    select validation_id, quoted_gpu_model, 92 as check_order, 'transferbench_a2a' as check_name,
        'TransferBench a2a' as tool, 'average all-to-all bandwidth' as what,
        transferbench_a2a_run as run, transferbench_a2a_gbps as value, transferbench_a2a_text as text
    from facts where not nvidia_quote and transferbench_a2a_run is not null
    union all
    select validation_id, quoted_gpu_model, 93, 'babelstream_triad', 'BabelStream (hip-stream)',
        'Triad of the slowest of ' || babelstream_gpus || ' GPU(s)', babelstream_run, babelstream_triad_mbps,
        babelstream_triad_text
    from facts where not nvidia_quote and babelstream_run is not null
    union all
    select validation_id, quoted_gpu_model, 94, 'rocblas_fp32_4000', 'rocblas-bench', 'FP32 4000³ gemm',
        rocblas_fp32_4000_run, rocblas_fp32_4000_gflops, rocblas_fp32_4000_text
    from facts where not nvidia_quote and rocblas_fp32_4000_run is not null
),

floored as (
    select b.*, t.pass_at_or_above as floor, t.unit, t.source as floor_source,
        regexp_replace(t.pass_at_or_above::varchar, '\.0$', '') as floor_text,
        regexp_replace(b.value::varchar, '\.0$', '') as value_text
    from benchmarks as b
    left join {{ source('ref', 'acceptance_thresholds') }} as t
        on t.gpu_model = b.quoted_gpu_model and t."check" = b.check_name
),

rccl as (
    select *, rccl_floor is not null and quoted_gpu_count = 8 and rccl_gpus = 8 and rccl_message_bytes = 8 * 1024 ^ 3
        as floor_applies
    from facts where rccl_busbw_text is not null or rccl_timed_out
)

select validation_id, 90 as check_order, 0 as tie,
    case when rccl_busbw_gbps is not null and floor_applies then 'rccl_allreduce_8gpu' else 'rccl_allreduce' end as check_name,
    case when rccl_busbw_text is null or rccl_busbw_gbps is null then 'inconclusive'
        when not floor_applies then 'note' when rccl_busbw_gbps >= rccl_floor then 'pass' else 'fail' end as status,
    coalesce(rccl_busbw_gbps::varchar, rccl_busbw_text) as measured,
    case when floor_applies then '>= ' || rccl_floor_text || ' GB/s' end as expected,
    case when rccl_busbw_text is null then 'all_reduce_perf did not finish in time'
        when rccl_busbw_gbps is null then 'all_reduce_perf bus bandwidth is not a finite number'
        when floor_applies then 'in-place busbw ' || rccl_busbw_gbps || ' GB/s at 8 GiB vs floor ' || rccl_floor_text
        else 'in-place busbw ' || rccl_busbw_gbps || ' GB/s (' || coalesce(rccl_gpus::varchar, 'None') || ' GPUs, '
            || coalesce(rccl_message_bytes::varchar, 'None') || ' B); no floor applies' end as message,
    case when floor_applies then 'acceptance_thresholds.csv: ' || rccl_floor_source
        else 'acceptance_thresholds.csv rccl_allreduce_8gpu: the floor is for 8 GPUs at 8 GiB only' end as source_of_rule
from rccl

union all
select validation_id, 91, 0, 'rvs_gst',
    case when rvs_gst_missed > 0 then 'fail' when rvs_gst_results > 0 then 'pass' else 'inconclusive' end,
    (rvs_gst_results - rvs_gst_missed) || ' of ' || rvs_gst_results || ' met', 'every result met its target',
    case when rvs_gst_missed > 0
            then rvs_gst_missed || ' of ' || rvs_gst_results || ' RVS gst result(s) missed target, e.g. '
                || coalesce(rvs_gst_missed_gflops::varchar, 'None') || ' < '
                || coalesce(rvs_gst_missed_target_gflops::varchar, 'None') || ' GFLOPS'
        when rvs_gst_results > 0 then 'all ' || rvs_gst_results || ' RVS gst result(s) met target (' || rvs_gst_conf || ')'
        else 'RVS gst (' || rvs_gst_conf || ') printed no result' end,
    'RVS gst''s own target per result (rocm-validation-suite conf ' || rvs_gst_conf || ')'
from facts where rvs_gst_results is not null

union all
select validation_id, check_order, 0, check_name,
    case when run = 'missing' then 'note' when run = 'timed_out' or value is null then 'inconclusive'
        when floor is null then 'note' when value >= floor then 'pass' else 'fail' end,
    coalesce(value_text, text),
    case when floor is not null then '>= ' || floor_text || ' ' || unit end,
    case when run = 'missing' then tool || ' is not installed on the host (not on PATH): not run'
        when run = 'timed_out' then tool || ' did not finish within the deep deadline'
        when value is null and text is not null then tool || ' ' || what || ' is not a finite number (' || text || ')'
        when value is null then tool || ' printed no result'
        when floor is null then what || ' ' || value_text || '; no floor for ' || coalesce(quoted_gpu_model, 'the quote')
        when value >= floor then what || ' ' || value_text || ' ' || unit || ' (floor ' || floor_text || ')'
        else what || ' ' || value_text || ' ' || unit || ' is below the floor of ' || floor_text || ' ' || unit end,
    case when floor is not null then 'acceptance_thresholds.csv: ' || floor_source
        else 'acceptance_thresholds.csv ' || check_name || ': no floor for the quoted model' end
from floored
