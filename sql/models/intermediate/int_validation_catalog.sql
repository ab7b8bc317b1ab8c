-- One row per catalog GPU model, with the identifiers a validation matches a probed GPU by: the gfx
-- target and the PCI device ids (and SR-IOV virtual function ids) read out of gpus.csv's text.
-- Ephemeral: a step of int_validation_facts and int_validation_gpu_identities (inlined there as a CTE); a table of its own would cost a
-- dbt node per build for a few rows.
{{ config(materialized='ephemeral') }}

select
    gpu_model, vendor, memory_gb_marketed, source,
    split_part(coalesce(llvm_target, ''), ' ', 1) as gfx,
    regexp_extract_all(lower(coalesce(pci_device_ids, '')), '0x[0-9a-f]{4}') as device_ids,
    -- SR-IOV virtual function ids, written "(VF 0x74b5)" in gpus.csv.
    regexp_extract_all(lower(coalesce(pci_device_ids, '')), 'vf (0x[0-9a-f]{4})', 1) as vf_device_ids
from {{ source('ref', 'gpus') }}
