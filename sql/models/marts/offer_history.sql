-- One row per distinct observation of an offer × billing option: every price ever seen, with when
-- and where. The same content delivered again (another file, re-serialised) adds no row: it moves
-- last_observed_at and counts in times_observed. superseded_by: the content hash of the file
-- version that replaced the latest file carrying this observation at its path (of two that state
-- the same time, the one seen last; null while a current file still carries it; docs/inputs.md).
-- Incremental (macros/incremental_files.sql), per content group (source × observation_hash): a
-- build from the published warehouse recomputes every group of a source that lost a file from all
-- its observations (its rows are deleted first), and merges each other group a new file's
-- observations fall in with its stored row: the first observation is the first of the stored one
-- and the new ones, last_observed_at the latest, times_observed their sum, and superseded_by null
-- (a current file carries it). A group with an observation in a file whose state changed (the
-- version a new one superseded at its path, a withdrawn file) or a new observation whose file is
-- already not current (two versions of a new path in one refresh) is found again from every
-- observation instead: only superseded_by depends on file states. Those groups' stored rows are
-- found by their keys (a group whose time is part of its content by that time too, so DuckDB reads
-- only the row groups of that time) and replaced by row id (macros/replace_rows.sql): a delete by
-- the key alone read every key of the history on every refresh.
{{ config(materialized='incremental', incremental_strategy='replace_rows',
          pre_hook="{{ delete_changed_sources() }}") }}
-- depends_on: {{ source('raw', 'file_changes') }}
-- depends_on: {{ source('raw', 'build') }}

with
{%- if is_incremental() %}
added as materialized (
    -- This build's observations (the newest row groups of stg_quote_observations) outside the
    -- sources recomputed whole.
    select o.*, f.state as file_state, f.superseded_by as file_superseded_by, f.last_seen_at as file_last_seen_at
    from {{ ref('stg_quote_observations') }} as o
    left join {{ ref('int_file_states') }} as f
        on f.source_name = o.source_name and f.file_sha256 = o.file_sha256
    where {{ quote_rows_added('o') }}
        and o.source_name not in {{ offer_history_changed_sources() }}
),

regrouped as materialized (
    -- Groups a new observation of a file that is not current falls in (rare), and the groups of the
    -- observations of files whose state changed (a scrape that rewrites its one file supersedes the
    -- last version every refresh): recomputed whole, from a narrow read of the few files named. A
    -- group whose time is stated carries it (stated_observed_at, as merged_groups below): each of
    -- its observations, in any file, has that time, so they are looked up by it too.
    select distinct source_name, observation_hash, case when observed_at_stated then observed_at end as stated_observed_at
    from added
    where coalesce(file_state, 'current') != 'current'
    union
    select o.source_name, o.observation_hash, case when o.observed_at_stated then o.observed_at end
    from {{ ref('stg_quote_observations') }} as o
    semi join {{ state_changed_files() }} as c
        on c.source_name = o.source_name and c.file_sha256 = o.file_sha256
    where o.source_name not in {{ offer_history_changed_sources() }}
),
{%- endif %}

observations as not materialized (
    -- Not materialized: each step below reads only the columns it needs (a materialized copy of
    -- every wide row spilled to disk under the build's memory limit; make bench, docs/benchmark.md).
    -- Incremental: only the groups recomputed whole, by two narrow reads (the sources, the groups),
    -- each of which DuckDB skips when nothing names one.
    select o.*, f.state as file_state, f.superseded_by as file_superseded_by, f.last_seen_at as file_last_seen_at
    from {{ ref('stg_quote_observations') }} as o
    left join {{ ref('int_file_states') }} as f
        on f.source_name = o.source_name and f.file_sha256 = o.file_sha256
    {% if is_incremental() -%}
    where o.source_name in {{ offer_history_changed_sources() }}
    union all
    -- The regrouped groups' observations, by their time where it is stated: DuckDB then reads only
    -- the row groups of those times (rows are stored roughly as observed), where the random hash
    -- alone made it read every key of the history (a scraper that rewrites its one file).
    select o.*, f.state as file_state, f.superseded_by as file_superseded_by, f.last_seen_at as file_last_seen_at
    from {{ ref('stg_quote_observations') }} as o
    semi join (select * from regrouped where stated_observed_at is not null) as g
        on g.source_name = o.source_name and g.observation_hash = o.observation_hash
        and g.stated_observed_at = o.observed_at
    left join {{ ref('int_file_states') }} as f
        on f.source_name = o.source_name and f.file_sha256 = o.file_sha256
    union all
    select o.*, f.state as file_state, f.superseded_by as file_superseded_by, f.last_seen_at as file_last_seen_at
    from {{ ref('stg_quote_observations') }} as o
    semi join (select * from regrouped where stated_observed_at is null) as g
        on g.source_name = o.source_name and g.observation_hash = o.observation_hash
    left join {{ ref('int_file_states') }} as f
        on f.source_name = o.source_name and f.file_sha256 = o.file_sha256
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
        -- The latest observation's file; on a tie (the same content, stated at the same time, in
        -- two files) the file seen last, then the larger hash: never the order rows were stored in,
        -- which differs between an incremental and a full build.
        case when not bool_or(coalesce(file_state, 'current') = 'current') over same_content
            then arg_max(file_superseded_by, {
                'observed_at': observed_at,
                'file_last_seen_at': coalesce(file_last_seen_at, '-infinity'::timestamptz),
                'file_sha256': file_sha256}) filter (where observed_at is not null) over same_content
            end as superseded_by
    from repeated_observations
    window same_content as (partition by source_name, observation_hash)
    qualify {{ first_observation_of_content() }}
),

distinct_observations as (
    select * from single_observations
    union all by name
    select * from distinct_repeated
),

{%- if is_incremental() %}

merged_groups as materialized (
    select distinct
        source_name, observation_hash,
        -- A time the file stated is part of the content (observation_hash): every observation of the
        -- group, stored or new, has this one.
        case when observed_at_stated then observed_at end as stated_observed_at
    from added as a
    where not exists (
        select 1 from regrouped as g
        where g.source_name = a.source_name and g.observation_hash = a.observation_hash
    )
),

stored_rows as materialized (
    -- The stored row (row id) of each merged group and each regrouped one: the rows this build
    -- replaces. Found by narrow reads of the keys, each skipped when it has nothing to find: a group
    -- with a stated time by that time too, so DuckDB reads only the row groups of that time (the rows
    -- are stored roughly in the order they were observed), where the hash alone, being random, made
    -- it read every key of the history. A dbt unit test's stand-in for this table (a CTE: `this`
    -- renders as its name) has no row ids: its rows are found by their keys, and replace none.
    {%- set stored_rowid = 'null::bigint' if this is string else 's.rowid' %}
    {#- Per kind of group (merged, regrouped): the groups with a stated time, then the others. #}
    {%- for groups, is_merged, stated in [('merged_groups', 'true', true), ('merged_groups', 'true', false),
                                           ('regrouped', 'false', true), ('regrouped', 'false', false)] %}
    {%- if not loop.first %}
    union all
    {%- endif %}
    select {{ stored_rowid }} as stored_rowid, s.source_name, s.observation_hash, {{ is_merged }} as is_merged
    from {{ this }} as s
    semi join (select * from {{ groups }} where stated_observed_at is {{ 'not null' if stated else 'null' }}) as g
        on g.source_name = s.source_name and g.observation_hash = s.observation_hash
        {%- if stated %}
        and g.stated_observed_at = s.observed_at
        {%- endif %}
    {%- endfor %}
),

merge_candidates as (
    -- Each merged group's stored row (its first observation so far) and its new observations, each
    -- a group of one. The stored rows are read whole by row id: reading every column of the table to
    -- find them took twice as long (SCALE=default).
    select t.* exclude (superseded_by), {{ stored_rowid | replace('s.', 't.') }} as stored_rowid
    from {{ this }} as t
    {%- if this is string %}
    semi join (select * from stored_rows where is_merged) as g
        on g.source_name = t.source_name and g.observation_hash = t.observation_hash
    {%- else %}
    where t.rowid in (select stored_rowid from stored_rows where is_merged)
    {%- endif %}
    union all by name
    select a.* exclude (file_state, file_superseded_by, file_last_seen_at), a.observed_at as last_observed_at, 1::bigint as times_observed
    from added as a
    semi join merged_groups as g
        on g.source_name = a.source_name and g.observation_hash = a.observation_hash
),

merged as (
    select
        * exclude (stored_rowid) replace (
            max(last_observed_at) over same_content as last_observed_at,
            sum(times_observed) over same_content::bigint as times_observed
        ),
        null::varchar as superseded_by,
        max(stored_rowid) over same_content as replaces_rowid
    from merge_candidates
    window same_content as (partition by source_name, observation_hash)
    qualify {{ first_observation_of_content() }}
),

distinct_or_merged as (
    select d.*, r.stored_rowid as replaces_rowid
    from distinct_observations as d
    left join (select * from stored_rows where not is_merged) as r
        on r.source_name = d.source_name and r.observation_hash = d.observation_hash
    union all by name
    select * from merged
),
{%- endif %}

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
        {%- if is_incremental() %},
        -- The stored row this one replaces (macros/replace_rows.sql; not a column of the table).
        replaces_rowid
        {%- endif %}
    from {{ 'distinct_or_merged' if is_incremental() else 'distinct_observations' }}
)

select * from final
