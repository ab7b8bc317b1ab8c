-- One row per micro-benchmark check of every decidable validation (before numbering): the PyTorch
-- gemm_bf16_8192 and hbm_copy results against the quoted GPU's floors in acceptance_thresholds.
-- Ephemeral: a step of int_validation_checks (inlined there as a CTE); a table of its own would cost a
-- dbt node per build for a few rows.
{{ config(materialized='ephemeral') }}

with bench as (
    select
        q.validation_id, t."check" as check_name, t.pass_at_or_above, t.unit, t.source,
        regexp_replace(t.pass_at_or_above::varchar, '\.0$', '') as floor_text,
        case t."check" when 'gemm_bf16_8192' then q.probe_gemm_bf16_8192_tflops else q.probe_hbm_copy_gbps end as value,
        case t."check" when 'gemm_bf16_8192' then q.probe_gemm_bf16_8192_text else q.probe_hbm_copy_text end as reported,
        case when not q.torch_importable then 'PyTorch is not installed on the host'
            when coalesce(q.torch_device_count, 0) = 0 then 'PyTorch sees no GPU'
            else coalesce(q.torch_error, 'benchmarks not requested') end as why_not
    from {{ ref('int_validation_facts') }} as q
    join {{ source('ref', 'acceptance_thresholds') }} as t
        on t.gpu_model = q.quoted_gpu_model and t."check" in ('gemm_bf16_8192', 'hbm_copy')
)

select validation_id, case check_name when 'gemm_bf16_8192' then 80 else 81 end as check_order, 0 as tie, check_name,
    case when value is null and reported is null then 'note' when value is null then 'inconclusive'
        when value < pass_at_or_above then 'fail' else 'pass' end as status,
    coalesce(value::varchar, reported) as measured, '>= ' || floor_text || ' ' || unit as expected,
    case when value is null and reported is null then 'not measured (' || why_not || '); floor ' || floor_text || ' ' || unit
        when value is null then reported || ' is not a measurement (not a finite number); floor ' || floor_text || ' ' || unit
        when value < pass_at_or_above then value || ' ' || unit || ' is below the floor of ' || floor_text || ' (' || source || ')'
        else value || ' ' || unit || ' ≥ ' || floor_text end as message,
    'acceptance_thresholds.csv: ' || source as source_of_rule
from bench
