-- One row per check of every validation: what was measured, what was expected, the status (pass,
-- fail, inconclusive or note) and where the rule comes from, numbered in check order. The checks are
-- decided by the int_validation_*_checks models over the landed probe facts (int_validation_facts);
-- validate-host prints these same rows (provider_eval/validation_sql.py). Every check of a record whose
-- raw probe output is missing is the recorded one, marked so in source_of_rule
-- (int_validation_recorded_checks).
{#- Each model decides one group of checks; all give the same columns. -#}
{%- set check_models = ['int_validation_host_checks', 'int_validation_gpu_checks', 'int_validation_stack_checks',
    'int_validation_bench_checks', 'int_validation_recorded_checks', 'int_validation_run_checks',
    'int_validation_partition_checks', 'int_validation_nvidia_checks', 'int_validation_deep_checks'] %}
with checks as (
    {%- for check_model in check_models %}
    select validation_id, check_order, tie, check_name, status, measured, expected, message, source_of_rule
    from {{ ref(check_model) }}
    {%- if not loop.last %}
    union all
    {%- endif %}
    {%- endfor %}
)

select
    validation_id,
    row_number() over (partition by validation_id order by check_order, tie, check_name, message) as check_number,
    check_name, status, measured::varchar as measured, expected::varchar as expected, message, source_of_rule
from checks
