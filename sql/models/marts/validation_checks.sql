-- One row per check of every on-hardware validation, as decided in SQL (int_validation_checks):
-- what validate-host printed and what hardware_validations.verdict is made of.
select * from {{ ref('int_validation_checks') }}
