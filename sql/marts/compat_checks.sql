-- One row per configuration × software stack with a ROCm compatibility verdict. Empty until the
-- compatibility check is built; the columns are the contract.
select
    null::varchar as gpu_model,
    null::varchar as rocm_version,
    null::varchar as os,
    null::varchar as kernel,
    null::varchar as torch_version,
    null::varchar as engine,
    null::varchar as verdict,
    null::varchar[] as reasons
where false
