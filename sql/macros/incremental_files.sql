{# The history models are incremental (docs/production.md, "Incremental refresh"): a build started
   from the published warehouse recomputes only the rows of the files raw.file_changes names.
   'added' / 'removed': one file's rows; 'source': a file of that source changed state, so what
   depends on file states is recomputed for the whole source. A full build (empty warehouse or
   dbt --full-refresh) takes every row and runs none of the deletes. #}

{# Rows of files this build added: true for every row of a full build. #}
{% macro file_is_added(alias) -%}
    {%- if is_incremental() -%}
    exists (
        select 1 from {{ source('raw', 'file_changes') }} as c
        where c.change = 'added' and c.source_name = {{ alias }}.source_name and c.file_sha256 = {{ alias }}.file_sha256
    )
    {%- else -%}
    true
    {%- endif -%}
{%- endmacro %}

{# Whether a source's file states changed in this build (false for every row of a full build). #}
{% macro source_is_changed(alias) -%}
    {%- if is_incremental() -%}
    {{ alias }}.source_name in (select source_name from {{ source('raw', 'file_changes') }} where change = 'source')
    {%- else -%}
    false
    {%- endif -%}
{%- endmacro %}

{# Pre-hook: delete the rows of files added (their rows come again) or removed, and of the sources
   whose file states changed when by_source. A no-op statement on a full build. #}
{% macro delete_changed_files(by_source=false) -%}
    {%- if is_incremental() -%}
    delete from {{ this }} as t
    where exists (
        select 1 from {{ source('raw', 'file_changes') }} as c
        where c.change in ('added', 'removed') and c.source_name = t.source_name and c.file_sha256 = t.file_sha256
    )
    {%- if by_source %} or {{ source_is_changed('t') }}{% endif %}
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
   or changed state. #}
{% macro offer_history_changed_sources() -%}
    (select source_name from {{ source('raw', 'file_changes') }} where change in ('removed', 'source'))
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


{# offer_history's one row of a content group: its first observation. The full build and the
   incremental merge must pick the same row, so both order by this. #}
{% macro first_observation_of_content() -%}
    row_number() over (
        partition by source_name, observation_hash
        order by observed_at, file_sha256, row_number
    ) = 1
{%- endmacro %}
