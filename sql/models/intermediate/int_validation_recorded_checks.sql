-- One row per check of a record whose raw probe output did not land, as validate-host recorded it (but
-- transport and workload, decided from the record), parsed back from "STATUS check: message". (Records
-- written before the SQL decided software_stack also carry it; with their probe output it is re-decided.)
-- Ephemeral: a step of int_validation_checks (inlined there as a CTE); a table of its own would cost a
-- dbt node per build for a few rows.
{{ config(materialized='ephemeral') }}

with recorded as (
    select v.validation_id, u.position, lower(m[1]) as status, m[2] as check_name, m[3] as message
    from {{ ref('stg_hardware_validations') }} as v
    cross join lateral (select unnest(v.recorded_reasons) as reason, generate_subscripts(v.recorded_reasons, 1) as position) as u
    cross join lateral (select regexp_extract(u.reason, '^(\S+) ([^:]+): (.*)$', ['s', 'c', 'm']) as p) as x
    cross join lateral (select [x.p.s, x.p.c, x.p.m] as m) as y
    where m[2] != ''
        -- The checks the other int_validation_*_checks models decide.
        and m[2] not in ('transport', 'workload')
        and not v.probe_output_landed
)

select validation_id,
    case when check_name = 'transport' then 0 when check_name = 'probe_document' then 1 when check_name = 'probe' then 2
        when check_name = 'partition' then 40 when check_name = 'software_stack' then 62
        when check_name = 'nvidia_stack' then 63 when check_name = 'visible_gpus' then 64 when check_name = 'ecc' then 65
        when check_name like 'rccl%' then 90 when check_name = 'rvs_gst' then 91 when check_name = 'workload' then 99
        else 98 end as check_order,
    position as tie, check_name, status, null::varchar as measured, null::varchar as expected, message,
    'recorded by validate-host (flows/probe/validate.py)' as source_of_rule
from recorded
