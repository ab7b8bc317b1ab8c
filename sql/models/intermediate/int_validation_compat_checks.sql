-- One row per decidable validation of an AMD quote whose GPUs are all the quoted model: the software
-- stack measured on the host (ROCm release, OS, kernel, PyTorch) and AMD's matrix's verdict on it, by
-- the rules compat_checks applies to an offer's declared stack (macros/compat_rules.sql).
-- Ephemeral: a step of int_validation_stack_checks (inlined there as a CTE).
{{ config(materialized='ephemeral') }}

with m_requests as (
    select
        validation_id,
        quoted_gpu_model as gpu_model,
        -- '6.2.3-1' (a package revision) is ROCm 6.2.3.
        nullif(split_part(probe_rocm_version, '-', 1), '') as rocm_version,
        -- os-release PRETTY_NAME without its ' LTS' ("Ubuntu 22.04.5 LTS" is Ubuntu 22.04.5).
        nullif(trim(regexp_replace(os_pretty_name, ' LTS$', '')), '') as os,
        kernel_release as kernel,
        -- The host's module version does not use AMD's driver numbering (docs/validation.md, not shipped).
        null::varchar as amdgpu_driver_version,
        -- '2.4.1+rocm6.2' is PyTorch 2.4.1.
        nullif(split_part(torch_version, '+', 1), '') as torch_version,
        null::varchar as engine
    from {{ ref('int_validation_facts') }}
    where not nvidia_quote and found_models = [quoted_gpu_model]
),

m_stacks as (
    {{ compat_stacks('(select distinct * exclude (validation_id) from m_requests)') }}
),

m_facts as (
    {{ compat_release_facts('m_stacks') }}
),

m_candidates as (
    {{ compat_candidates('m_facts') }}
),

m_verdicts as (
    {{ compat_checks('m_candidates') }}
)

select r.*, v.verdict, v.reasons
from m_requests as r
join m_verdicts as v
    on v.gpu_model is not distinct from r.gpu_model and v.rocm_version is not distinct from r.rocm_version
    and v.os is not distinct from r.os and v.kernel is not distinct from r.kernel
    and v.amdgpu_driver_version is not distinct from r.amdgpu_driver_version
    and v.torch_version is not distinct from r.torch_version and v.engine is not distinct from r.engine
