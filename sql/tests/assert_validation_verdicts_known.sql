-- Offending rows: hardware validations whose verdict is not pass/fail/inconclusive or that lack an id,
-- offer or time (such a row could silently keep a failed host in the rankings).
with validations as (
    select * from {{ ref('hardware_validations') }}
),

final as (
    select validation_id, offer_id, verdict, validated_at
    from validations
    where verdict not in ('pass', 'fail', 'inconclusive')
        or validation_id is null or offer_id is null or validated_at is null
)

select * from final
