-- One row per probe finding, virtualisation and XGMI link check of every decidable validation (before
-- numbering): what the probe recognised in the tools' output, SR-IOV virtual functions on a quote
-- stating bare metal, and disabled links between the GPUs of one node.
-- Ephemeral: a step of int_validation_checks (inlined there as a CTE); a table of its own would cost a
-- dbt node per build for a few rows.
{{ config(materialized='ephemeral') }}

with facts as (
    select * from {{ ref('int_validation_facts') }}
),

findings as (
    select
        q.validation_id, u.position, u.code,
        last_value(coalesce(q.finding_messages[u.position], '')) over (
            partition by q.validation_id, u.code order by u.position
            rows between unbounded preceding and unbounded following) as message,
        q.nvidia_quote, r.status as rule_status, coalesce(r.amd_only, false) as amd_only, r.source
    from facts as q
    cross join lateral (select unnest(q.finding_codes) as code, generate_subscripts(q.finding_codes, 1) as position) as u
    left join {{ source('ref', 'probe_findings') }} as r on r.finding = u.code
    -- One row per code (the first position, the last message): a repeated finding is one check.
    qualify row_number() over (partition by q.validation_id, u.code order by u.position) = 1
)

-- finding <CODE>: what the probe recognised in a tool's output (probe_findings.csv).
select validation_id, 10 as check_order, position as tie, 'finding ' || left(code, 40) as check_name,
    case when nvidia_quote and amd_only then 'note' else coalesce(rule_status, 'note') end as status,
    code as measured, null::varchar as expected,
    case when nvidia_quote and amd_only then 'not applicable to an NVIDIA host (' || left(message, 300) || ')'
        else left(message, 300) end as message,
    coalesce('probe_findings.csv: ' || source, 'no rule in probe_findings.csv: a note') as source_of_rule
from findings

union all
-- virtualisation: a quote stating bare metal, on a host whose GPUs are SR-IOV virtual functions.
select validation_id, 45, 0, 'virtualisation',
    case when vfs > 0 then 'fail' else 'pass' end,
    case when vfs > 0 then vfs || ' SR-IOV virtual function(s) (' || array_to_string(list_distinct(vf_ids), ', ') || ')'
        else 'no SR-IOV virtual function' end,
    'bare_metal',
    case when vfs > 0 then 'quote says bare metal; ' || vfs || ' of ' || physical_gpu_count || ' GPU(s) are SR-IOV virtual functions (PCI '
            || array_to_string(list_distinct(vf_ids), ', ') || ')'
        else 'no GPU is an SR-IOV virtual function, as a bare-metal quote implies' end,
    'the quote (offers.virtualisation); gpus.csv pci_device_ids VF ids (' || coalesce(catalog_source, '') || ')'
from facts where quoted_virtualisation = 'bare_metal' and physical_gpu_count > 0

union all
-- links: a disabled XGMI link on a multi-GPU node cuts collective bandwidth (AMD quotes).
select validation_id, 61, 0, 'links',
    case when xgmi_links_disabled > 0 then 'fail' else 'pass' end,
    coalesce(xgmi_links_enabled, 0) || ' enabled, ' || coalesce(xgmi_links_disabled, 0) || ' disabled',
    '0 disabled',
    case when xgmi_links_disabled > 0 then xgmi_links_disabled || ' XGMI link(s) disabled'
        else xgmi_links_enabled || ' XGMI link(s) enabled, none disabled' end,
    'amd-smi topology (docs/validation.md#checks): every XGMI link between GPUs of one node is expected up'
from facts where not nvidia_quote and (xgmi_links_disabled > 0 or xgmi_links_enabled > 0)

union all
select validation_id, 61, 0, 'links', 'note', null, null, 'not applicable: XGMI links are AMD''s; NVLink is not checked yet',
    'XGMI is AMD''s fabric'
from facts where nvidia_quote
