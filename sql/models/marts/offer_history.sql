-- One row per distinct observation of an offer × billing option: every price ever seen, with when
-- and where. The same content delivered again (another file, re-serialised) adds no row: it moves
-- last_observed_at and counts in times_observed. superseded_by: the content hash of the file
-- version that replaced the latest file carrying this observation at its path (null while a
-- current file still carries it; docs/inputs.md).
-- Incremental (macros/incremental_files.sql): each row depends on every observation of the same
-- content, so a build from the published warehouse recomputes whole content groups: those the new
-- files' observations fall in, and every group of a source that lost a file or whose file states
-- changed (offer_history_changed_groups).
{{ config(materialized='incremental', incremental_strategy='append',
          pre_hook="{{ delete_offer_history_changed_groups() }}") }}
-- depends_on: {{ source('raw', 'file_changes') }}

with observations as {{ 'materialized' if is_incremental() else 'not materialized' }} (
    -- A full build does not materialize: each step below reads only the columns it needs (a
    -- materialized copy of every wide row spilled to disk under the build's memory limit; make bench,
    -- docs/benchmark.md). An incremental one does: its few groups' rows are found once, not by each
    -- of the three steps scanning the whole history again (1.85 -> 0.54 s at SCALE=default).
    select o.*, f.state as file_state, f.superseded_by as file_superseded_by
    from {{ ref('stg_quote_observations') }} as o
    left join {{ ref('int_file_states') }} as f
        on f.source_name = o.source_name and f.file_sha256 = o.file_sha256
    {% if is_incremental() -%}
    where o.source_name in (select source_name from {{ offer_history_changed_sources() }})
        or exists (
            select 1 from ({{ offer_history_added_groups() }}) as g
            where g.source_name = o.source_name and g.observation_hash = o.observation_hash
        )
    {%- endif %}
),

repeated_content as (
    -- Content seen more than once (the same quote delivered again). Usually few: an aggregate over
    -- two narrow columns, so that only these groups are sorted below, not every wide row.
    select source_name, observation_hash
    from observations
    group by all
    having count(*) > 1
),

single_observations as (
    -- Content seen once is its own first and last observation; what the windows below would say
    -- of a group of one row, without sorting it.
    select
        *,
        observed_at as last_observed_at,
        1::bigint as times_observed,
        -- arg_max skips a null observed_at, as the window does.
        case when coalesce(file_state, 'current') != 'current' and observed_at is not null
            then file_superseded_by end as superseded_by
    from observations as o
    where not exists (
        select 1 from repeated_content as r
        where r.source_name = o.source_name and r.observation_hash = o.observation_hash
    )
),

repeated_observations as (
    select *
    from observations as o
    where exists (
        select 1 from repeated_content as r
        where r.source_name = o.source_name and r.observation_hash = o.observation_hash
    )
),

distinct_repeated as (
    select
        *,
        max(observed_at) over same_content as last_observed_at,
        count(*) over same_content as times_observed,
        case when not bool_or(coalesce(file_state, 'current') = 'current') over same_content
            then arg_max(file_superseded_by, observed_at) over same_content end as superseded_by
    from repeated_observations
    window same_content as (partition by source_name, observation_hash)
    qualify row_number() over (
        partition by source_name, observation_hash
        order by observed_at, file_sha256, row_number
    ) = 1
),

distinct_observations as (
    select * from single_observations
    union all by name
    select * from distinct_repeated
),

final as (
    select
        offer_id, provider, gpu_model, gpu_name_raw, gpus_per_node, billing_model,
        price_amount, currency, price_unit, price_scope,
        usd_per_gpu_hour, usd_per_node_hour, fx_rate_date, hours_per_month,
        observed_at, valid_from, valid_until, region, notes,
        rocm_version, os, kernel, amdgpu_driver_version,
        source_name, source_file, file_sha256, row_number,
        tier, commitment_term_hours, vram_bytes_stated, observed_at_stated,
        last_observed_at, times_observed, observation_hash,
        quote_status, requested_on, superseded_by
    from distinct_observations
)

select * from final
