{# A model's schema is its layer's name as written (staging, intermediate, marts), not dbt's
   default "<target schema>_<custom schema>". #}
{% macro generate_schema_name(custom_schema_name, node) -%}
    {{ (custom_schema_name or target.schema) | trim }}
{%- endmacro %}
