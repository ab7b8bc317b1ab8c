-- One row per offer × billing option (billing model, tier, commitment term) per source: its latest
-- observation, as every model about the current state of quotes reads it. Observations of current
-- files win; an option the current files no longer list keeps its last listed observation, flagged
-- is_not_listed once two successful reads in a row went without it (docs/inputs.md, availability).
-- Options seen only in withdrawn files are no longer current (offer_history keeps them). Among the
-- observations that count, a dated one (observed_at_basis other than landed_at) always wins over an
-- undated one, however recent the undated file landed: its observed_at is only when it arrived.
-- Incremental (macros/incremental_files.sql): the latest observation is the best one under
-- one total order that a file only added cannot change for the observations already there, so a
-- build from the published warehouse compares each option's stored latest with the new files'
-- observations and those of files whose state changed only. An option whose stored latest's file is
-- no longer current (a scrape that rewrites its one file supersedes it) keeps that shortcut when a
-- candidate in a current file beats the stored latest even ranked as current (dated over undated,
-- then later): the stored latest was the best of every other observation, so nothing else can; a
-- candidate that ties it adds the observations at that time, the only others that can win. What
-- any other change can move is found again from every observation: the options of a source that lost
-- a file (their rows are deleted first), and the other options no current file lists (is_not_listed
-- counts reads, which any read may change). The flags that age with the refresh's clock (expired,
-- not yet valid, too old) are computed here, for the latest observations only; a post-hook brings
-- the kept rows' flags up to the refresh's time.
{%- set refreshed_at = "(select refreshed_at from " ~ source('raw', 'refresh') ~ ")" %}
{{ config(materialized='incremental', incremental_strategy='delete+insert', unique_key='offer_option_id',
          pre_hook="{{ delete_changed_sources_and_withdrawn_latest() }}",
          post_hook="{{ refresh_quote_clock_flags() }}") }}
-- depends_on: {{ source('raw', 'file_changes') }}
-- depends_on: {{ source('raw', 'build') }}

with
{%- if is_incremental() %}
stored as (
    -- The latest observations the copied warehouse holds (its changed sources' rows deleted), with
    -- their files' states now.
    select t.* exclude (is_not_listed, is_expired, is_not_yet_valid, is_too_old),
        coalesce(f.state, 'current') as file_state
    from {{ this }} as t
    left join {{ ref('int_file_states') }} as f
        on f.source_name = t.source_name and f.file_sha256 = t.file_sha256
),

state_changed_observations as materialized (
    -- The observations of the files whose state changed, with their state now (a narrow read of the
    -- few files named; this build's rows are among the new rows).
    select o.*, coalesce(f.state, 'current') as file_state
    from {{ ref('stg_quote_observations') }} as o
    semi join {{ state_changed_files() }} as c
        on c.source_name = o.source_name and c.file_sha256 = o.file_sha256
    left join {{ ref('int_file_states') }} as f
        on f.source_name = o.source_name and f.file_sha256 = o.file_sha256
    where not {{ quote_rows_added('o') }}
        and o.source_name not in {{ offer_history_changed_sources() }}
),

new_current as (
    -- This build's observations (its row groups only) and those of the files whose state changed,
    -- in files current now.
    select o.offer_option_id, o.observed_at, o.observed_at_basis != 'landed_at' as is_dated
    from {{ ref('stg_quote_observations') }} as o
    left join {{ ref('int_file_states') }} as f
        on f.source_name = o.source_name and f.file_sha256 = o.file_sha256
    where {{ quote_rows_added('o') }}
        and coalesce(f.state, 'current') = 'current'
        and o.source_name not in {{ offer_history_changed_sources() }}
    union all
    select offer_option_id, observed_at, observed_at_basis != 'landed_at'
    from state_changed_observations
    where file_state = 'current'
),

new_current_best as (
    select offer_option_id, bool_or(is_dated) as any_dated,
        max(observed_at) filter (where is_dated) as latest_dated, max(observed_at) as latest
    from new_current
    group by all
),

outranked_options as (
    -- Options whose stored latest's file is no longer current, beaten by a current candidate even
    -- if that stored latest were current: dated over undated, then strictly later.
    select s.offer_option_id
    from stored as s
    join new_current_best as n using (offer_option_id)
    where s.file_state != 'current'
        and case when s.observed_at_basis != 'landed_at' then n.latest_dated > s.observed_at
            else n.any_dated or n.latest > s.observed_at end
),

tied_options as (
    -- Options whose stored latest's file is no longer current, tied by a current candidate (as
    -- dated, at the same time) and beaten by none: the winner is among the observations at that
    -- time, which a narrow read of that time finds (every other one ranked below the stored latest).
    select s.offer_option_id, s.observed_at, s.observed_at_basis != 'landed_at' as is_dated
    from stored as s
    join new_current_best as n using (offer_option_id)
    where s.file_state != 'current'
        and case when s.observed_at_basis != 'landed_at' then n.latest_dated = s.observed_at
            else not n.any_dated and n.latest = s.observed_at end
),

withdrawn_latest_options as (
    -- Options listed in a file this build withdrew that have no stored latest left (the pre-hook
    -- deleted those in withdrawn files): found again from every other observation.
    select distinct offer_option_id
    from state_changed_observations
    where file_state = 'withdrawn'
        and offer_option_id not in (select offer_option_id from stored)
),

tied_observations as materialized (
    -- The observations at a tied option's time (those of this build's files are among the new rows).
    -- Materialized before the files whose state changed are taken out: an anti join over every
    -- observation first read each one whole when no option was tied (0.5 -> 11 s, SCALE=default).
    select o.*
    from {{ ref('stg_quote_observations') }} as o
    semi join tied_options as t
        on t.offer_option_id = o.offer_option_id and t.observed_at = o.observed_at
        and t.is_dated = (o.observed_at_basis != 'landed_at')
    where not {{ quote_rows_added('o') }}
        and o.source_name not in {{ offer_history_changed_sources() }}
),

not_outranked_options as (
    select offer_option_id from stored where file_state != 'current'
    except
    select offer_option_id from outranked_options
    except
    select offer_option_id from tied_options
),

recomputed_options as (
    select offer_option_id from not_outranked_options
    union
    select offer_option_id from withdrawn_latest_options
),
{%- endif %}

observations as not materialized (
    -- Not materialized (nor candidates): each step reads only the columns it needs; a materialized
    -- copy of every wide row spilled to disk under the build's memory limit (make bench, default
    -- scale: 75.6 s → under 8 s inside the build).
    -- Every observation that counts (incremental: only those of the options found again whole,
    -- the new files' and those of the files whose state changed).
    select o.*, coalesce(f.state, 'current') as file_state, o.observed_at_basis != 'landed_at' as is_dated
    {%- if is_incremental() %}
    from (
        -- Narrow reads, one per reason, each row in the first that takes it, rather than one
        -- OR over every observation: DuckDB narrows each scan by the few sources, options or files
        -- named (0.8 -> 0.1 s at SCALE=default, the same rows). NOT IN, not NOT EXISTS (15 s here):
        -- neither side is ever null (source names; offer_option_id is an md5).
        select * from {{ ref('stg_quote_observations') }} as o
        where o.source_name in {{ offer_history_changed_sources() }}
        union all
        select * from {{ ref('stg_quote_observations') }} as o
        where o.offer_option_id in (select offer_option_id from recomputed_options)
            and o.source_name not in {{ offer_history_changed_sources() }}
        union all
        select * from {{ ref('stg_quote_observations') }} as o
        where {{ quote_rows_added('o') }}
            and o.source_name not in {{ offer_history_changed_sources() }}
            and o.offer_option_id not in (select offer_option_id from recomputed_options)
        union all
        select * exclude (file_state) from state_changed_observations
        where offer_option_id not in (select offer_option_id from recomputed_options)
        union all
        select o.* from tied_observations as o
        anti join {{ state_changed_files() }} as c
            on c.source_name = o.source_name and c.file_sha256 = o.file_sha256
    ) as o
    {%- else %}
    from {{ ref('stg_quote_observations') }} as o
    {%- endif %}
    left join {{ ref('int_file_states') }} as f
        on f.source_name = o.source_name and f.file_sha256 = o.file_sha256
    where coalesce(f.state, 'current') != 'withdrawn'
),

candidates as not materialized (
    select * from observations
    {%- if is_incremental() %}
    union all by name
    -- The stored latest of each option a new file lists: the best of its earlier observations.
    select s.*, s.observed_at_basis != 'landed_at' as is_dated
    from stored as s
    where s.file_state = 'current'
        and s.offer_option_id in (select offer_option_id from observations)
    {%- endif %}
),

latest_times as (
    -- When each offer was last seen (dated observations first): an aggregate over narrow columns.
    -- Ranking the wide history rows directly would sort every one of them; only ties are ranked below.
    select
        offer_option_id,
        bool_or(file_state = 'current') as is_listed_now,
        -- Current files first, then dated observations, then the latest time.
        case when bool_or(file_state = 'current') then bool_or(is_dated and file_state = 'current')
            else bool_or(is_dated) end as is_dated,
        case when bool_or(file_state = 'current') then coalesce(
                max(observed_at) filter (where file_state = 'current' and is_dated),
                max(observed_at) filter (where file_state = 'current'))
            else coalesce(max(observed_at) filter (where is_dated), max(observed_at)) end as observed_at
    from candidates
    group by all
),

latest as (
    select o.* exclude (is_dated), l.is_listed_now
    from candidates as o
    join latest_times as l
        on l.offer_option_id = o.offer_option_id
        and l.observed_at = o.observed_at and l.is_dated = o.is_dated
        and (o.file_state = 'current' or not l.is_listed_now)
    -- Seen twice at the same time: the row's own date before a source default, then the first file
    -- (by hash) and row, as before.
    qualify row_number() over (
        partition by o.offer_option_id
        order by o.observed_at_basis != 'row', o.file_sha256, o.row_number
    ) = 1
),

unlisted_paths as (
    -- Each option no current file lists, at each present path where it was listed: the number of
    -- the last version there that listed it.
    select
        o.offer_option_id, o.source_name,
        v.original_path, max(v.version) as last_listed_version
    from observations as o
    join latest as l
        on l.offer_option_id = o.offer_option_id
        and not l.is_listed_now
    join {{ ref('stg_file_versions') }} as v
        on v.source_name = o.source_name and v.file_sha256 = o.file_sha256
    where exists (
        select 1 from {{ ref('stg_file_versions') }} as c
        where c.source_name = v.source_name and c.original_path = v.original_path and c.state = 'current')
    group by all
),

counted_versions as (
    -- Versions that count as a successful read: a rejected file (a broken catalog body) is no evidence.
    select v.source_name, v.original_path, v.version, v.reads
    from {{ ref('stg_file_versions') }} as v
    where not exists (
        select 1 from {{ source('raw', 'ingest_manifest') }} as m
        where m.source_name = v.source_name and m.file_sha256 = v.file_sha256 and m.status = 'rejected')
),

unlisted as (
    -- Successful reads since the option was last listed, at the path that went without it the least.
    select offer_option_id, min(reads_without) as reads_without
    from (
        select
            u.offer_option_id, u.original_path, coalesce(sum(c.reads), 0) as reads_without
        from unlisted_paths as u
        left join counted_versions as c
            on c.source_name = u.source_name and c.original_path = u.original_path
            and c.version > u.last_listed_version
        group by all
    )
    group by all
),

final as (
    select
        -- loaded_in_build names the build that loaded the observation: bookkeeping, not a fact of the quote.
        l.* exclude (file_state, is_listed_now, loaded_in_build),
        {{ quote_is_expired(refreshed_at) }} as is_expired,
        {{ quote_is_not_yet_valid(refreshed_at) }} as is_not_yet_valid,
        {{ quote_is_too_old(refreshed_at) }} as is_too_old,
        coalesce(r.reads_without >= 2, false) as is_not_listed
    from latest as l
    left join unlisted as r using (offer_option_id)
)

select * from final
