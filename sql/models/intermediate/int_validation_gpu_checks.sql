-- One row per GPU identity, count and VRAM check of every decidable validation (before numbering):
-- every physical GPU must be the quoted catalog model, as many as quoted, with the marketed memory.
-- Ephemeral: a step of int_validation_checks (inlined there as a CTE); a table of its own would cost a
-- dbt node per build for a few rows.
{{ config(materialized='ephemeral') }}

with identities as (
    select * from {{ ref('int_validation_gpu_identities') }}
),

facts as (
    select * from {{ ref('int_validation_facts') }}
)

-- gpu_model, per GPU whose identity fits several catalog models including the quoted one.
select i.validation_id, 20 as check_order, 0 as tie, 'gpu_model' as check_name, 'inconclusive' as status,
    i.how as measured, i.quoted_gpu_model as expected,
    'GPU ' || coalesce(i.gpu_index::varchar, 'None') || ': ' || i.how || ' fits ' || array_to_string(i.models, ', ')
        || '; cannot tell which' as message,
    'gpus.csv pci_device_ids / llvm_target; gpu_ambiguous_names.csv' as source_of_rule
from identities as i where i.found_model is null

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
    case when physical_gpu_count = quoted_gpu_count then 'pass' when physical_gpu_count < quoted_gpu_count then 'fail' else 'inconclusive' end,
    physical_gpu_count::varchar, quoted_gpu_count::varchar,
    case when physical_gpu_count = quoted_gpu_count then physical_gpu_count || ' GPU(s), as quoted'
        else 'quote says ' || quoted_gpu_count || ' GPU(s), host shows ' || physical_gpu_count end,
    'the quote (offers.gpus_per_node)'
from facts

union all
-- vram: the smallest physical GPU against the catalog's marketed GB, less the tolerance.
select validation_id, 50, 0, 'vram',
    case when vram_sized < physical_gpu_count then 'inconclusive' when vram_smallest < vram_floor_bytes then 'fail' else 'pass' end,
    vram_smallest::varchar, '>= ' || vram_floor_bytes || ' bytes',
    case when vram_sized < physical_gpu_count then 'VRAM size not reported for every GPU'
        when vram_smallest < vram_floor_bytes
            then 'smallest GPU has ' || vram_smallest || ' bytes; a ' || quoted_gpu_model || ' has '
                || memory_gb_marketed || ' GB (floor ' || vram_floor_bytes || ' bytes)'
        else 'at least ' || vram_smallest || ' bytes per GPU (catalog ' || memory_gb_marketed || ' GB, tolerance 3 %)'
    end,
    'gpus.csv memory_gb_marketed (' || catalog_source || '); conventions.csv validation_vram_tolerance'
from facts where memory_gb_marketed is not null and physical_gpu_count > 0
