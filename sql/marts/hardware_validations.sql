-- One row per on-hardware validation of a rented host. Empty until validations are recorded;
-- the columns are the contract.
select
    null::varchar as validation_id,
    null::varchar as host,
    null::varchar as offer_id,
    null::varchar as verdict,
    null::varchar[] as reasons,
    null::timestamptz as validated_at
where false
