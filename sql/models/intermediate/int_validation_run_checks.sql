-- One row per check of the validation run itself, for every validation (before numbering): each problem
-- the SSH session reported (transport), each part of the host's document sanitise.py had to cut or drop
-- (probe_document), a probe output that is not a document of the known schema (probe), and the
-- representative workload's outcome. Decided from the landed record and its raw probe output.
-- Ephemeral: a step of int_validation_checks (inlined there as a CTE).
{{ config(materialized='ephemeral') }}

with validations as (
    select * from {{ ref('stg_hardware_validations') }}
)

-- transport: a timeout, cut output or a non-zero exit leaves the result uncertain, never a pass.
select v.validation_id, 0 as check_order, u.position as tie, 'transport' as check_name, 'inconclusive' as status,
    left(u.problem, 300) as measured, 'the probe finished, exit status 0, output complete' as expected,
    left(u.problem, 300) as message,
    'project rule (docs/validation.md#transport): an incomplete run decides nothing' as source_of_rule
from validations as v
cross join lateral (select unnest(v.transport_problems) as problem,
                           generate_subscripts(v.transport_problems, 1) as position) as u

union all
-- probe_document: what had to be cut or dropped from the host's document (int_validation_verdicts
-- makes the whole verdict inconclusive when there is one).
select v.validation_id, 1, u.position, 'probe_document', 'inconclusive', left(u.problem, 300), 'a clean document',
    left(u.problem, 300),
    'flows/probe/sanitise.py limits (docs/validation.md#hostile-hosts): a document that breaks them decides nothing'
from validations as v
cross join lateral (select unnest(v.probe_document_problems) as problem,
                           generate_subscripts(v.probe_document_problems, 1) as position) as u
where v.probe_output_landed

union all
-- probe: the raw output landed but is no probe document of the schema the checks read.
select validation_id, 2, 0, 'probe', 'inconclusive', coalesce(probe_schema_version, 'None'), 'provider-eval.probe/1',
    'no probe document of schema provider-eval.probe/1 came back (got '
        || coalesce('''' || left(probe_schema_version, 60) || '''', 'None') || ')',
    'flows/probe/probe.py SCHEMA_VERSION: only its document is read'
from validations where probe_output_landed and not probe_decidable

union all
-- workload: the representative benchmark (never run on a host that failed; a run that broke is uncertain).
select validation_id, 99, 0, 'workload',
    case when workload_skipped then 'note' when workload_problem is not null then 'inconclusive' else 'pass' end,
    workload_template, 'completed',
    case when workload_skipped then 'not run: the host failed validation'
        when workload_problem is not null then left(workload_problem, 300)
        else workload_template || ' completed; result kept for the next refresh'
            || coalesce(' (' || workload_result_format || ')', '') end,
    'project rule (docs/validation.md#representative-workload): a throughput is credited only from a host that did not fail'
from validations where workload_template is not null
