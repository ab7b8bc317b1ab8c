{# dbt incremental strategy 'replace_rows' (offer_history): the stored rows whose row ids the select's
   replaces_rowid column names are deleted, then the select's rows appended without that column. The
   model finds those row ids while it reads the stored rows, in the same transaction as this delete,
   so they name the same rows; a delete+insert on the model's key read every key of the table to find
   the few rows it replaces. The table's columns are the stored ones (on_schema_change ignore). #}
{% macro get_incremental_replace_rows_sql(arg_dict) -%}
    {%- set target = arg_dict['target_relation'] -%}
    {%- set source = arg_dict['temp_relation'] -%}
    {%- set columns = get_quoted_csv(arg_dict['dest_columns'] | map(attribute='name')) -%}
    delete from {{ target }}
    where rowid in (select replaces_rowid from {{ source }} where replaces_rowid is not null);

    insert into {{ target }} ({{ columns }})
    select {{ columns }} from {{ source }}
{%- endmacro %}
