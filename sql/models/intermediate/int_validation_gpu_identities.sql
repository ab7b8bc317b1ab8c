-- One row per physical GPU of every decidable validation: its catalog candidates, how they were
-- found, and the model it is (null when it fits several models including the quoted one).
with quoted as (
    -- Only a decidable probe document is checked (int_validation_run_checks says why another is not).
    select validation_id, quoted_gpu_model from {{ ref('stg_hardware_validations') }} where probe_decidable
),

catalog as (
    select * from {{ ref('int_validation_catalog') }}
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
        select coalesce(list(c.gpu_model order by c.gpu_model), []) as models from catalog as c
        where list_contains(c.device_ids, p.pci_device_id)
    ) as by_id on true
    left join lateral (
        select coalesce(list(c.gpu_model order by c.gpu_model), []) as models from catalog as c where c.gfx = p.gfx_target
    ) as by_gfx on true
)

select
    c.*, q.quoted_gpu_model,
    case when len(c.models) = 1 then c.models[1]
        when list_contains(c.models, q.quoted_gpu_model) then null  -- cannot tell which
        else 'unknown (' || c.how || ')'
    end as found_model
from candidates as c
join quoted as q using (validation_id)
