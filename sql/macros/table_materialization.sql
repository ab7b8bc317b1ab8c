{# Every table model is one `create or replace table … as (select …)`. dbt-duckdb's own table
   materialization builds `<model>__dbt_tmp`, renames it into place, commits and drops a backup: four
   more statements and a page of Jinja per model, for a file that a refresh builds from nothing
   (~0.7 CPU-s of the ~4 a refresh's dbt build costs here). The tables are the same, column for
   column and row for row; a failing select still fails its model, by name. #}
{% materialization table, adapter="duckdb" %}
  {%- set target_relation = this.incorporate(type='table') -%}
  {% call statement('main') -%}
    create or replace table {{ target_relation }} as (
{{ compiled_code }}
    )
  {%- endcall %}
  {{ adapter.commit() }}
  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}
