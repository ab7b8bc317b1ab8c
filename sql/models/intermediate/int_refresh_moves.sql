-- Whether this refresh's clock and its reads still change a row that an incremental build keeps.
-- Both move every refresh, but usually decide nothing new: flows/input_changes.py asks this view,
-- on the copy of the published warehouse with this refresh's raw tables loaded and before dbt runs,
-- and skips what they alone reach when the answer is no (docs/production.md). A view: evaluated
-- then, never stored.
--   clock_moves: a quote flag that ages (expired, not yet valid, too old) is no longer what
--     int_quote_latest holds, or a costed option's clock state (its quote age in days) no longer
--     what int_workload_costs holds. Nothing else reads raw.refresh (tests/flows/test_refresh_moves.py
--     keeps it so).
--   reads_move: an option no current file lists is not flagged is_not_listed yet, so this read may
--     flag it. While file states stay, reads only add up: a flagged option stays flagged and an
--     option a current file lists is never flagged (int_quote_latest).
{{ config(materialized='view') }}

with refresh as (
    select refreshed_at from {{ source('raw', 'refresh') }}
)

select
    exists (
        select 1 from {{ ref('int_quote_latest') }}
        where {{ quote_clock_flags_differ('(select refreshed_at from refresh)') }}
    )
    or exists (
        select 1
        from (select distinct offer_option_id, clock_state_hash from {{ ref('int_workload_costs') }}) as t
        anti join ({{ option_clock_states() }}) as n using (offer_option_id, clock_state_hash)
    ) as clock_moves,
    exists (
        select 1
        from {{ ref('int_quote_latest') }} as q
        left join {{ ref('int_file_states') }} as f
            on f.source_name = q.source_name and f.file_sha256 = q.file_sha256
        where coalesce(f.state, 'current') != 'current' and not q.is_not_listed
    ) as reads_move
