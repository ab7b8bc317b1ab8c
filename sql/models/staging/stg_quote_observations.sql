-- One row per quote observation (offer × billing option seen in one file), with prices converted
-- to USD per GPU-hour and per node-hour. Units and currency are converted here, once, and each
-- offer option gets its one key (offer_option_id, and cross_source_option_id across sources),
-- which every later model joins on.
-- Incremental (macros/incremental_files.sql): a build from the published warehouse converts only
-- the observations of new files (stamped with the build's number, loaded_in_build). Nothing here
-- depends on when the refresh runs: the flags that age with its clock (expired, not yet valid, too
-- old) belong to an option's latest observation (int_quote_latest), so a refresh never rewrites
-- the history's rows (keeping them here meant scanning every row on every refresh).
{{ config(materialized='incremental', incremental_strategy='append',
          pre_hook="{{ delete_changed_files(with_state=false) }}") }}
-- depends_on: {{ source('raw', 'file_changes') }}

with observations as (
    {{ raw_rows_of_files(source('raw', 'quote_observations')) }}
),

fx as (
    select currency, usd_per_unit::decimal(38, 9) as usd_per_unit, rate_date::date as rate_date
    from {{ source('ref', 'fx_rates') }}
),

hours_per_month as (
    -- Staging reads only sources: the one convention it needs straight from conventions.csv
    -- (stg_conventions types the same row for the later layers).
    select value::integer as hours_per_month from {{ source('ref', 'conventions') }} where name = 'hours_per_month'
),

observed_days as (
    -- The latest rate on or before each (currency, day) seen: the as-of join runs on those few
    -- hundred pairs, not on every observation.
    select d.currency, d.observed_on, fx.usd_per_unit, fx.rate_date
    from (select distinct currency, observed_at::date as observed_on from observations) as d
    asof left join fx
        on d.currency = fx.currency and d.observed_on >= fx.rate_date
),

converted as (
    select
        o.* replace (price_amount::decimal(38, 6) as price_amount),
        -- Monthly prices use 730 h/month (8760 h / 12; data/reference/conventions.csv); providers
        -- themselves use 672, 730 or 744.
        conv.hours_per_month,
        case o.price_unit
            when 'second' then 1.0 / 3600
            when 'minute' then 1.0 / 60
            when 'hour' then 1.0
            when 'month' then conv.hours_per_month::double
        end as hours_per_price_unit,
        case o.billing_granularity
            when 'second' then 1
            when 'minute' then 60
            when 'hour' then 3600
            when 'month' then conv.hours_per_month * 3600
        end as billing_granularity_s,
        fx.usd_per_unit::decimal(38, 9) as fx_usd_per_unit,
        fx.rate_date as fx_rate_date
    from observations as o
    left join observed_days as fx
        on fx.currency = o.currency and fx.observed_on = o.observed_at::date
    cross join hours_per_month as conv
),

final as (
    select
        * exclude (hours_per_price_unit),
        (price_amount * fx_usd_per_unit / hours_per_price_unit)::decimal(18, 6) as usd_per_price_scope_hour,
        case price_scope
            when 'per_gpu' then (price_amount * fx_usd_per_unit / hours_per_price_unit)::decimal(18, 6)
            else (price_amount * fx_usd_per_unit / hours_per_price_unit / gpus_per_node)::decimal(18, 6)
        end as usd_per_gpu_hour,
        case price_scope
            when 'per_node' then (price_amount * fx_usd_per_unit / hours_per_price_unit)::decimal(18, 6)
            else (price_amount * fx_usd_per_unit / hours_per_price_unit * gpus_per_node)::decimal(18, 6)
        end as usd_per_node_hour,
        (storage_per_gb_month * fx_usd_per_unit)::decimal(18, 6) as storage_usd_per_gb_month,
        (egress_per_gb * fx_usd_per_unit)::decimal(18, 6) as egress_usd_per_gb,
        (licence_per_hour * fx_usd_per_unit)::decimal(18, 6) as licence_usd_per_hour,
        (setup_fee * fx_usd_per_unit)::decimal(18, 6) as setup_fee_usd,
        (support_per_month * fx_usd_per_unit)::decimal(18, 6) as support_usd_per_month,
        -- Undated (observed_at is only when the file landed): its age is unknown, so it cannot be
        -- shown to be within an age limit (QUOTE_AGE_UNKNOWN); a pending request has no price to age.
        observed_at_basis = 'landed_at' and max_quote_age_days is not null and quote_status = 'quoted'
            as is_age_unknown,
        -- Same quote content (whatever file or serialisation it came in) = same hash; a time the
        -- file did not state (arrival time) is not content. Hashed as a JSON array: every field in
        -- its place, empty ones as null and text quoted (concat_ws skipped empty fields, so a value in
        -- the neighbouring column, a quote valid from a day against one valid until it, hashed the same).
        md5(to_json(row(provider, offer_id, gpu_model, gpu_name_raw, gpus_per_node, billing_model,
            tier, commitment_term_hours, price_amount, currency, price_unit, price_scope,
            billing_granularity, min_term_hours, storage_per_gb_month, egress_per_gb, licence_per_hour,
            setup_fee, support_per_month, valid_from, valid_until, region, notes, rocm_version, os,
            kernel, amdgpu_driver_version, vram_bytes_stated,
            case when observed_at_stated then observed_at end,
            quote_status, requested_on, cpu_model, cpu_cores, system_ram_bytes, nvme_bytes,
            interconnect, network_gbps, virtualisation, software_tested))) as observation_hash,
        -- One offer option (offer × billing option, per source): the grain of int_quote_latest and
        -- offers, as one key. A tier or commitment term left empty is part of it (null ≠ '').
        md5(to_json([source_name, provider, offer_id, billing_model, tier, commitment_term_hours::varchar]))
            as offer_option_id,
        -- The same option in every source that lists it (provider × GPU model × GPUs per node × billing
        -- option): the cost model costs it once, from the source that observed it last.
        md5(to_json([provider, gpu_model, gpus_per_node::varchar, billing_model, tier, commitment_term_hours::varchar]))
            as cross_source_option_id,
        -- The build that loaded the row: an incremental model finds this build's rows by it (it only
        -- grows, so older row groups are skipped unread), not by their files' random hashes.
        (select build_number from {{ source('raw', 'build') }}) as loaded_in_build
    from converted
)

select * from final
