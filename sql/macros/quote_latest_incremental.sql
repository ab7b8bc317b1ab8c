{# int_quote_latest is incremental per offer option (docs/production.md, "Incremental refresh").
   Its latest observation is the first under one order (current files, dated, newest, then the row's
   own date, file hash, row), so the best of the stored latest and a new file's observations is the
   best of all of them, as long as the older observations' file states stay as they were. #}

{# Pre-hook: delete the options of the sources that lost a file or whose file states changed; the
   select finds them again from every observation (those gone for good stay deleted). A no-op
   statement on a full build. #}
{% macro delete_quote_latest_of_changed_sources() -%}
    {%- if is_incremental() -%}
    delete from {{ this }} where source_name in {{ offer_history_changed_sources() }}
    {%- else -%}
    select 1
    {%- endif -%}
{%- endmacro %}
