-- One verdict per validation from its checks (int_validation_checks): fail beats inconclusive beats
-- pass; a probe document that broke the schema (a probe_document check) decides nothing: inconclusive.
with checks as (
    select * from {{ ref('int_validation_checks') }}
),

validations as (
    select validation_id from {{ ref('stg_hardware_validations') }}
),

final as (
    select
        v.validation_id,
        case when count(*) filter (where c.check_name = 'probe_document') > 0 then 'inconclusive'
            when count(*) filter (where c.status = 'fail') > 0 then 'fail'
            when count(*) filter (where c.status = 'inconclusive') > 0 then 'inconclusive'
            else 'pass' end as verdict,
        coalesce(list(upper(c.status) || ' ' || c.check_name || ': ' || c.message order by c.check_number)
            filter (where c.validation_id is not null), []) as reasons,
        count(c.validation_id) filter (where c.status = 'fail') as checks_failed
    from validations as v
    left join checks as c using (validation_id)
    group by v.validation_id
)

select * from final
