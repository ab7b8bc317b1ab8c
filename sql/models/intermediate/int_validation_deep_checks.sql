-- One row per deep-tool check of every decidable validation (before numbering): rccl-tests
-- all_reduce_perf's in-place bus bandwidth against the 8-GPU floor in acceptance_thresholds (when the
-- run matches the floor's conditions: 8 GPUs quoted and used, 8 GiB messages), and RVS gst's own
-- met/not-met per result. Only when --deep ran the tools.
-- Ephemeral: a step of int_validation_checks (inlined there as a CTE).
{{ config(materialized='ephemeral') }}

with facts as (
    select f.*, t.pass_at_or_above as rccl_floor, t.source as rccl_floor_source,
        regexp_replace(t.pass_at_or_above::varchar, '\.0$', '') as rccl_floor_text
    from {{ ref('int_validation_facts') }} as f
    left join {{ source('ref', 'acceptance_thresholds') }} as t
        on t.gpu_model = f.quoted_gpu_model and t."check" = 'rccl_allreduce_8gpu'
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
