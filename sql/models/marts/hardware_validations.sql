-- One row per on-hardware validation of a rented host against one offer (evidence files under
-- <warehouse dir>/validations/), with what the probe measured and whether it is the offer's latest.
select * from {{ ref('stg_hardware_validations') }}
