-- One row per check of every validation: what was measured, what was expected, the status (pass,
-- fail, inconclusive or note) and where the rule comes from. Decided here over the landed probe facts,
-- the quote the host was validated against, the GPU catalog, acceptance_thresholds, the ROCm floors
-- and probe_findings; validate-host prints these same rows (provider_eval/validation_sql.py). Checks
-- not decided here yet (transport, probe document, partition, NVIDIA stack, deep tools, software
-- stack, workload) are the recorded ones, marked so in source_of_rule.
with validations as (
    select * from {{ ref('stg_hardware_validations') }}
),

conventions as (
    select validation_vram_tolerance from {{ ref('stg_conventions') }}
),

catalog as (
    select
        model, vendor, memory_gb_marketed, source,
        split_part(coalesce(llvm_target, ''), ' ', 1) as gfx,
        regexp_extract_all(lower(coalesce(pci_device_ids, '')), '0x[0-9a-f]{4}') as device_ids,
        -- SR-IOV virtual function ids, written "(VF 0x74b5)" in gpus.csv.
        regexp_extract_all(lower(coalesce(pci_device_ids, '')), 'vf (0x[0-9a-f]{4})', 1) as vf_device_ids
    from {{ source('ref', 'gpus') }}
),

quoted as (
    -- Only a decidable probe document is checked (verdict.py returns early otherwise).
    select v.*, coalesce(c.vendor = 'NVIDIA', false) as nvidia_quote, c.memory_gb_marketed,
        c.source as catalog_source
    from validations as v
    left join catalog as c on c.model = v.quoted_gpu_model
    where v.probe_decidable
),

physical as (
    select g.* from {{ ref('stg_validation_gpus') }} as g where g.is_physical
),

candidates as (
    -- Each physical GPU's catalog candidates: AMD by PCI device id, else gfx target (never by name);
    -- NVIDIA by the board name, read by the shared resolver at ingest (flows/ingest/names.py).
    select
        p.validation_id, p.gpu_index, p.vendor, p.name_gpu_model,
        case when p.vendor = 'NVIDIA' then
                case when p.name_gpu_model is not null then [p.name_gpu_model] else coalesce(p.name_candidates, []) end
            when len(by_id.models) > 0 then by_id.models
            when p.gfx_target is not null then by_gfx.models
            else []::varchar[]
        end as models,
        case when p.vendor = 'NVIDIA' then
                'nvidia-smi name ''' || coalesce(p.market_name, 'None') || ''''
                || case when p.name_gpu_model is not null then ''
                        when len(coalesce(p.name_candidates, [])) > 0 then ' names several variants'
                        else ': ' || coalesce(p.name_reason, 'unknown') end
            when len(by_id.models) > 0 then 'PCI device id ' || p.pci_device_id
            when p.gfx_target is not null then 'gfx target ' || p.gfx_target
            else 'no PCI device id or gfx target reported'
        end as how
    from physical as p
    left join lateral (
        select coalesce(list(c.model order by c.model), []) as models from catalog as c
        where list_contains(c.device_ids, p.pci_device_id)
    ) as by_id on true
    left join lateral (
        select coalesce(list(c.model order by c.model), []) as models from catalog as c where c.gfx = p.gfx_target
    ) as by_gfx on true
),

identified as (
    select
        c.*, q.quoted_gpu_model,
        case when len(c.models) = 1 then c.models[1]
            when list_contains(c.models, q.quoted_gpu_model) then null  -- cannot tell which
            else 'unknown (' || c.how || ')'
        end as found_model
    from candidates as c
    join quoted as q using (validation_id)
),

per_validation as (
    select
        q.validation_id,
        count(i.validation_id) as gpus,
        list_sort(list(distinct i.found_model) filter (where i.found_model is not null)) as found_models,
        count(i.validation_id) > 0 and count(*) filter (where i.vendor is distinct from 'NVIDIA') = 0 as all_nvidia,
        -- What the tools' marketing names read as (never the identity: a VF or a renamed board).
        list_sort(list(distinct i.name_gpu_model) filter (where i.vendor is distinct from 'NVIDIA'
                                                         and i.name_gpu_model is not null)) as named_models
    from quoted as q
    left join identified as i using (validation_id)
    group by q.validation_id
),

virtual_functions as (
    -- Physical GPUs whose PCI device id is a catalogued SR-IOV virtual function.
    select p.validation_id, list(p.pci_device_id order by p.gpu_index) as vf_ids, count(*) as vfs
    from physical as p
    where exists (select 1 from catalog as c where list_contains(c.vf_device_ids, p.pci_device_id))
    group by p.validation_id
),

listed as (
    -- Devices the tools enumerated (partitions count: PyTorch sees each partition as a device).
    select validation_id, count(*) as devices from {{ ref('stg_validation_gpus') }}
    where enumerated_by = 'tools' group by validation_id
),

vram as (
    select validation_id, count(*) as gpus, count(physical_vram_bytes) as sized, min(physical_vram_bytes) as smallest
    from physical
    group by validation_id
),

facts as (
    select
        q.*, pv.gpus, coalesce(pv.found_models, []) as found_models, pv.all_nvidia,
        coalesce(pv.named_models, []) as named_models,
        vr.sized as vram_sized, vr.smallest as vram_smallest, coalesce(vf.vfs, 0) as vfs, vf.vf_ids,
        coalesce(ls.devices, 0) as listed_devices,
        floor(q.memory_gb_marketed * 1e9 * conv.validation_vram_tolerance)::bigint as vram_floor_bytes,
        f.min_rocm_version, f.source as rocm_floor_source,
        -- Versions compared as (major, minor, patch) lists, as verdict.py's tuples were.
        case when regexp_matches(q.probe_rocm_version, '^\s*\d+\.\d+') then [regexp_extract(q.probe_rocm_version, '^\s*(\d+)', 1)::int, regexp_extract(q.probe_rocm_version, '^\s*\d+\.(\d+)', 1)::int,
            coalesce(nullif(regexp_extract(q.probe_rocm_version, '^\s*\d+\.\d+\.(\d+)', 1), ''), '0')::int] end as rocm_have,
        case when regexp_matches(f.min_rocm_version, '^\s*\d+\.\d+') then [regexp_extract(f.min_rocm_version, '^\s*(\d+)', 1)::int, regexp_extract(f.min_rocm_version, '^\s*\d+\.(\d+)', 1)::int,
            coalesce(nullif(regexp_extract(f.min_rocm_version, '^\s*\d+\.\d+\.(\d+)', 1), ''), '0')::int] end as rocm_need
    from quoted as q
    cross join conventions as conv
    join per_validation as pv using (validation_id)
    left join vram as vr using (validation_id)
    left join virtual_functions as vf using (validation_id)
    left join listed as ls using (validation_id)
    left join {{ source('ref', 'validation_rocm_floors') }} as f on f.gpu_model = q.quoted_gpu_model
),

findings as (
    select
        q.validation_id, u.position, u.code,
        last_value(coalesce(q.finding_messages[u.position], '')) over (
            partition by q.validation_id, u.code order by u.position
            rows between unbounded preceding and unbounded following) as message,
        q.nvidia_quote, r.status as rule_status, coalesce(r.amd_only, false) as amd_only, r.source
    from quoted as q
    cross join lateral (select unnest(q.finding_codes) as code, generate_subscripts(q.finding_codes, 1) as position) as u
    left join {{ source('ref', 'probe_findings') }} as r on r.finding = u.code
    -- One row per code, as verdict.py kept them (the first position, the last message).
    qualify row_number() over (partition by q.validation_id, u.code order by u.position) = 1
),

bench as (
    select
        q.validation_id, t."check" as check_name, t.pass_at_or_above, t.unit, t.source,
        regexp_replace(t.pass_at_or_above::varchar, '\.0$', '') as floor_text,
        case t."check" when 'gemm_bf16_8192' then q.probe_gemm_bf16_8192_tflops else q.probe_hbm_copy_gbps end as value,
        case t."check" when 'gemm_bf16_8192' then q.probe_gemm_bf16_8192_text else q.probe_hbm_copy_text end as reported,
        case when not q.torch_importable then 'PyTorch is not installed on the host'
            when coalesce(q.torch_device_count, 0) = 0 then 'PyTorch sees no GPU'
            else coalesce(q.torch_error, 'benchmarks not requested') end as why_not
    from quoted as q
    join {{ source('ref', 'acceptance_thresholds') }} as t
        on t.gpu_model = q.quoted_gpu_model and t."check" in ('gemm_bf16_8192', 'hbm_copy')
),

decided as (
    -- finding <CODE>: what the probe recognised in a tool's output (probe_findings.csv).
    select validation_id, 10 as check_order, position as tie, 'finding ' || left(code, 40) as check_name,
        case when nvidia_quote and amd_only then 'note' else coalesce(rule_status, 'note') end as status,
        code as measured, null as expected,
        case when nvidia_quote and amd_only then 'not applicable to an NVIDIA host (' || left(message, 300) || ')'
            else left(message, 300) end as message,
        coalesce('probe_findings.csv: ' || source, 'no rule in probe_findings.csv: a note') as source_of_rule
    from findings

    union all
    -- gpu_model, per GPU whose identity fits several catalog models including the quoted one.
    select i.validation_id, 20, 0, 'gpu_model', 'inconclusive', i.how, i.quoted_gpu_model,
        'GPU ' || coalesce(i.gpu_index::varchar, 'None') || ': ' || i.how || ' fits ' || array_to_string(i.models, ', ')
            || '; cannot tell which',
        'gpus.csv pci_device_ids / llvm_target; gpu_ambiguous_names.csv'
    from identified as i where i.found_model is null

    union all
    -- gpu_model: every physical GPU must be the quoted catalog model.
    select validation_id, 20, 1, 'gpu_model',
        case when found_models = [quoted_gpu_model] then 'pass' else 'fail' end,
        array_to_string(found_models, ', '), quoted_gpu_model,
        case when found_models = [quoted_gpu_model]
            then 'every GPU is a ' || quoted_gpu_model || ' ('
                || case when all_nvidia then 'by the nvidia-smi name, read by flows/ingest/names.py'
                        else 'by PCI device id / gfx target' end || ')'
            else 'quote says ' || quoted_gpu_model || ', host has ' || array_to_string(found_models, ', ') end,
        'the quote; gpus.csv pci_device_ids / llvm_target (' || coalesce(catalog_source, 'no catalog row') || ')'
    from facts where len(found_models) > 0

    union all
    -- gpu_model note: a marketing name the shared resolver reads as another catalog model is worth saying.
    select validation_id, 20, 0, 'gpu_model', 'note', array_to_string(named_models, ', '), quoted_gpu_model,
        'the tools'' marketing name reads as ' || array_to_string(named_models, ', ')
            || '; the PCI device id / gfx target says ' || array_to_string(found_models, ', '),
        'flows/ingest/names.py on the tools'' market_name; the identity is the PCI device id / gfx target'
    from facts
    where len(named_models) > 0 and named_models != found_models
        and not coalesce(list_bool_or([m like 'unknown (%' for m in found_models]), false)

    union all
    -- gpu_count: physical GPUs, so a CPX/NPS4 host's logical devices are not counted as GPUs.
    select validation_id, 30, 0, 'gpu_count',
        case when gpus = quoted_gpu_count then 'pass' when gpus < quoted_gpu_count then 'fail' else 'inconclusive' end,
        gpus::varchar, quoted_gpu_count::varchar,
        case when gpus = quoted_gpu_count then gpus || ' GPU(s), as quoted'
            else 'quote says ' || quoted_gpu_count || ' GPU(s), host shows ' || gpus end,
        'the quote (offers.gpus_per_node)'
    from facts

    union all
    -- vram: the smallest physical GPU against the catalog's marketed GB, less the tolerance.
    select validation_id, 50, 0, 'vram',
        case when vram_sized < gpus then 'inconclusive' when vram_smallest < vram_floor_bytes then 'fail' else 'pass' end,
        vram_smallest::varchar, '>= ' || vram_floor_bytes || ' bytes',
        case when vram_sized < gpus then 'VRAM size not reported for every GPU'
            when vram_smallest < vram_floor_bytes
                then 'smallest GPU has ' || vram_smallest || ' bytes; a ' || quoted_gpu_model || ' has '
                    || memory_gb_marketed || ' GB (floor ' || vram_floor_bytes || ' bytes)'
            else 'at least ' || vram_smallest || ' bytes per GPU (catalog ' || memory_gb_marketed || ' GB, tolerance 3 %)'
        end,
        'gpus.csv memory_gb_marketed (' || catalog_source || '); conventions.csv validation_vram_tolerance'
    from facts where memory_gb_marketed is not null and gpus > 0

    union all
    -- virtualisation: a quote stating bare metal, on a host whose GPUs are SR-IOV virtual functions.
    select validation_id, 45, 0, 'virtualisation',
        case when vfs > 0 then 'fail' else 'pass' end,
        case when vfs > 0 then vfs || ' SR-IOV virtual function(s) (' || array_to_string(list_distinct(vf_ids), ', ') || ')'
            else 'no SR-IOV virtual function' end,
        'bare_metal',
        case when vfs > 0 then 'quote says bare metal; ' || vfs || ' of ' || gpus || ' GPU(s) are SR-IOV virtual functions (PCI '
                || array_to_string(list_distinct(vf_ids), ', ') || ')'
            else 'no GPU is an SR-IOV virtual function, as a bare-metal quote implies' end,
        'the quote (offers.virtualisation); gpus.csv pci_device_ids VF ids (' || coalesce(catalog_source, '') || ')'
    from facts where quoted_virtualisation = 'bare_metal' and gpus > 0

    union all
    -- visible_gpus (AMD quotes; NVIDIA's is recorded by verdict.py): PyTorch sees fewer devices than the
    -- tools list, e.g. a container given some of the node's GPUs. None at all: nothing can run.
    select validation_id, 64, 0, 'visible_gpus',
        case when torch_device_count = 0 then 'fail' else 'inconclusive' end,
        torch_device_count::varchar, listed_devices::varchar,
        'PyTorch (' || coalesce('HIP ' || torch_hip_version, 'torch ' || torch_version, 'torch') || ') sees '
            || torch_device_count || ' of the ' || listed_devices || ' device(s) '
            || coalesce(gpu_source, 'the tools') || ' lists',
        'project rule docs/validation.md (visible_gpus), as for NVIDIA hosts: torch.cuda.device_count() vs the devices the tools list'
    from facts
    where not nvidia_quote and torch_importable and torch_cuda_version is null and torch_device_count is not null
        and torch_device_count < listed_devices

    union all
    -- rocm: the ROCm release against the first one supporting the quoted GPU (AMD quotes).
    select validation_id, 60, 0, 'rocm',
        case when rocm_have is null then 'inconclusive' when rocm_have < rocm_need then 'fail' else 'pass' end,
        probe_rocm_version, '>= ' || min_rocm_version,
        case when rocm_have is null then 'ROCm version not found (/opt/rocm/.info/version, amd-smi version)'
            when rocm_have < rocm_need
                then 'ROCm ' || probe_rocm_version || ' is older than ' || min_rocm_version
                    || ', the first release supporting ' || quoted_gpu_model
            else 'ROCm ' || probe_rocm_version || ' (≥ ' || min_rocm_version || ' for ' || quoted_gpu_model || ')' end,
        'validation_rocm_floors.csv: ' || rocm_floor_source
    from facts where not nvidia_quote and min_rocm_version is not null and gpus > 0

    union all
    select validation_id, 60, 0, 'rocm', 'note', null, null,
        'not applicable: an NVIDIA host runs CUDA, not ROCm (validation_rocm_floors.csv covers AMD GPUs only)',
        'validation_rocm_floors.csv covers AMD GPUs only'
    from facts where nvidia_quote

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

    union all
    -- gemm_bf16_8192, hbm_copy: the PyTorch micro-benchmarks against acceptance_thresholds.
    select validation_id, case check_name when 'gemm_bf16_8192' then 80 else 81 end, 0, check_name,
        case when value is null and reported is null then 'note' when value is null then 'inconclusive'
            when value < pass_at_or_above then 'fail' else 'pass' end,
        coalesce(value::varchar, reported), '>= ' || floor_text || ' ' || unit,
        case when value is null and reported is null then 'not measured (' || why_not || '); floor ' || floor_text || ' ' || unit
            when value is null then reported || ' is not a measurement (not a finite number); floor ' || floor_text || ' ' || unit
            when value < pass_at_or_above then value || ' ' || unit || ' is below the floor of ' || floor_text || ' (' || source || ')'
            else value || ' ' || unit || ' ≥ ' || floor_text end,
        'acceptance_thresholds.csv: ' || source
    from bench
),

recorded as (
    -- The recorded checks of what is not decided above (STATUS check: message, as validate-host wrote them).
    select v.validation_id, u.position, lower(m[1]) as status, m[2] as check_name, m[3] as message
    from validations as v
    cross join lateral (select unnest(v.recorded_reasons) as reason, generate_subscripts(v.recorded_reasons, 1) as position) as u
    cross join lateral (select regexp_extract(u.reason, '^(\S+) ([^:]+): (.*)$', ['s', 'c', 'm']) as p) as x
    cross join lateral (select [x.p.s, x.p.c, x.p.m] as m) as y
    where m[2] != ''
        and not (v.probe_decidable and (m[2] in ('gpu_model', 'gpu_count', 'virtualisation', 'vram', 'rocm', 'links',
                                                'gemm_bf16_8192', 'hbm_copy')
                 or m[2] like 'finding %'))
),

carried as (
    select validation_id,
        case when check_name = 'transport' then 0 when check_name = 'probe_document' then 1 when check_name = 'probe' then 2
            when check_name = 'partition' then 40 when check_name = 'software_stack' then 62
            when check_name = 'nvidia_stack' then 63 when check_name = 'visible_gpus' then 64 when check_name = 'ecc' then 65
            when check_name like 'rccl%' then 90 when check_name = 'rvs_gst' then 91 when check_name = 'workload' then 99
            else 98 end as check_order,
        position as tie, check_name, status, null as measured, null as expected, message,
        'recorded by validate-host (flows/probe/verdict.py, flows/probe/validate.py)' as source_of_rule
    from recorded
),

final as (
    select validation_id, check_order, tie, check_name, status, measured, expected, message, source_of_rule
    from decided
    union all
    select validation_id, check_order, tie, check_name, status, measured, expected, message, source_of_rule
    from carried
)

select
    validation_id,
    row_number() over (partition by validation_id order by check_order, tie, check_name, message) as check_number,
    check_name, status, measured::varchar as measured, expected::varchar as expected, message, source_of_rule
from final
