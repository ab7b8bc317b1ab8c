-- One row per workload × GPU model × GPU count: does the workload fit in memory. Empty until the
-- memory-fit check is built; the columns are the contract.
select
    null::varchar as workload_id,
    null::varchar as gpu_model,
    null::integer as gpu_count,
    null::bigint as required_bytes_per_gpu,
    null::bigint as available_bytes_per_gpu,
    null::boolean as fits,
    null::integer as min_gpus
where false
