-- One row per validated offer: its newest validation and that validation's verdict. The one
-- definition of "latest validation" that ranking (int_workload_configurations), the offer checklist
-- (int_offer_checklist), hardware_validations.is_latest_for_offer and the report read.
with validations as (
    select v.validation_id, v.offer_id, v.validated_at,
        -- The GEMM the probe measured (the record's copy when its raw probe output did not land).
        coalesce(v.probe_gemm_bf16_8192_tflops, v.gemm_bf16_8192_tflops) as gemm_bf16_8192_tflops, d.verdict
    from {{ ref('stg_hardware_validations') }} as v
    join {{ ref('int_validation_verdicts') }} as d using (validation_id)
)

select * from validations
-- Newest first; the id breaks a tie of the same second so the choice never depends on file order.
qualify row_number() over (partition by offer_id order by validated_at desc, validation_id) = 1
