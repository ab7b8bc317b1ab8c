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

{# offer_history's content groups (source × observation_hash) a new file's observations fall in. #}
{% macro offer_history_added_groups() -%}
    select distinct o.source_name, o.observation_hash
    from {{ ref('stg_quote_observations') }} as o
    where {{ file_is_added('o') }}
{%- endmacro %}

{# The sources offer_history recomputes whole: one of their files was removed or changed state. #}
{% macro offer_history_changed_sources() -%}
    (select source_name from {{ source('raw', 'file_changes') }} where change in ('removed', 'source'))
{%- endmacro %}

{% macro delete_offer_history_changed_groups() -%}
    {%- if is_incremental() -%}
    delete from {{ this }} as t
    where t.source_name in (select source_name from {{ offer_history_changed_sources() }})
        or exists (
            select 1 from ({{ offer_history_added_groups() }}) as g
            where g.source_name = t.source_name and g.observation_hash = t.observation_hash
        )
    {%- else -%}
    select 1
    {%- endif -%}
{%- endmacro %}
