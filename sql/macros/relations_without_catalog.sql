{# Models name what they read as schema.table, never catalog.schema.table: the warehouse file is
   built as one name and published, attached and read under others (and check-fit runs the same
   compiled SQL on an in-memory database). #}
{% macro ref() -%}
    {{ return(builtins.ref(*varargs, **kwargs).include(database=false)) }}
{%- endmacro %}

{% macro source(source_name, table_name) -%}
    {{ return(builtins.source(source_name, table_name).include(database=false)) }}
{%- endmacro %}
