{# The history models are incremental (docs/production.md, "Incremental refresh"): a build started
   from the published warehouse recomputes only the rows of the files raw.file_changes names.
   'added' / 'removed': one file's rows; 'state': a known file whose state, successor or paths changed
   (the version a new one superseded, a withdrawn file, one listed again), so what its rows decide is
   recomputed; a source that lost a file is recomputed whole where a model cannot tell what the file's
   rows decided. A full build (empty warehouse or dbt --full-refresh) takes every row and runs none of
   the deletes. #}

{# The rows of a staged raw table whose file this build changed as `changes` names ('added', 'state'):
   every row of a full build. Found by a narrow read of the file keys, then fetched by row id: a filter
   on the keys alone made DuckDB read every column of every row, a cost that grew with the history
   (0.65 s of each scheduled refresh at SCALE=default, docs/benchmark.md); a new file's rows are the
   table's last, so the row ids name only its row groups. #}
{% macro raw_rows_of_files(relation, changes=['added']) -%}
    select * from {{ relation }}
    {%- if is_incremental() %}
    where rowid in (
        select r.rowid
        from {{ relation }} as r
        semi join (
            select source_name, file_sha256 from {{ source('raw', 'file_changes') }}
            where change in ('{{ changes | join("', '") }}')
        ) as c
            on c.source_name = r.source_name and c.file_sha256 = r.file_sha256
    )
    {%- endif %}
{%- endmacro %}

{# Pre-hook: delete the rows of files added (their rows come again) or removed, and of the files
   whose state changed when with_state. A no-op statement on a full build. #}
{% macro delete_changed_files(with_state=false) -%}
    {%- if is_incremental() -%}
    delete from {{ this }} as t
    where exists (
        select 1 from {{ source('raw', 'file_changes') }} as c
        where c.change in ('added', 'removed'{% if with_state %}, 'state'{% endif %})
            and c.source_name = t.source_name and c.file_sha256 = t.file_sha256
    )
    {%- else -%}
    select 1
    {%- endif -%}
{%- endmacro %}

{# Rows of stg_quote_observations this build appended (those of the files it added): stamped with
   raw.build's number, so DuckDB reads only the newest row groups. True for every row of a full build. #}
{% macro quote_rows_added(alias) -%}
    {%- if is_incremental() -%}
    {{ alias }}.loaded_in_build = (select build_number from {{ source('raw', 'build') }})
    {%- else -%}
    true
    {%- endif -%}
{%- endmacro %}

{# The sources offer_history and int_quote_latest recompute whole: one of their files was removed
   (what its rows decided is gone with them). #}
{% macro offer_history_changed_sources() -%}
    (select source_name from {{ source('raw', 'file_changes') }} where change = 'removed')
{%- endmacro %}

{# The files whose state this build changed: (source_name, file_sha256). #}
{% macro state_changed_files() -%}
    (select source_name, file_sha256 from {{ source('raw', 'file_changes') }} where change = 'state')
{%- endmacro %}

{# Pre-hook of offer_history and int_quote_latest: delete the rows of the sources they recompute
   whole (their select finds them again; those gone for good stay deleted). A no-op statement on a
   full build. #}
{% macro delete_changed_sources() -%}
    {%- if is_incremental() -%}
    delete from {{ this }} where source_name in {{ offer_history_changed_sources() }}
    {%- else -%}
    select 1
    {%- endif -%}
{%- endmacro %}


{# Pre-hook of int_quote_latest: delete_changed_sources, and the stored latest observations whose file
   is withdrawn now: their options are found again from every other observation, and one with none
   left (every file listing it withdrawn) has no row in the select to replace its stored one. #}
{% macro delete_changed_sources_and_withdrawn_latest() -%}
    {%- if is_incremental() -%}
    delete from {{ this }} as t
    where t.source_name in {{ offer_history_changed_sources() }}
        or exists (
            select 1 from {{ ref('int_file_states') }} as f
            where f.source_name = t.source_name and f.file_sha256 = t.file_sha256 and f.state = 'withdrawn'
        )
    {%- else -%}
    select 1
    {%- endif -%}
{%- endmacro %}


{# offer_history's one row of a content group: its first observation. The full build and the
   incremental merge must pick the same row, so both order by this. #}
{% macro first_observation_of_content() -%}
    row_number() over (
        partition by source_name, observation_hash
        order by observed_at, file_sha256, row_number
    ) = 1
{%- endmacro %}
