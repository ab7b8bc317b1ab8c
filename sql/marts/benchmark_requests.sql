-- One row per request of a benchmark run (per-request detail). Empty until per-request formats
-- (vLLM --save-detailed) are ingested; the columns are the contract.
select
    null::varchar as run_id,
    null::bigint as request_index,
    null::bigint as input_tokens,
    null::bigint as output_tokens,
    null::double as ttft_ms,
    null::double as latency_ms,
    null::varchar as error,
    null::varchar as source_name
where false
