{# After a build: `main.<mart>` is a view of `marts.<mart>` for every mart built in this run (an
   analyst's own mart included), so the public tables answer unqualified. A model that failed
   gets no view; the refresh then publishes nothing anyway. #}
{% macro publish_public_views() %}
    {% if execute %}
        {% for res in results
               if res.node.resource_type == 'model' and res.node.fqn[1] == 'marts' and res.status == 'success' %}
            {% do run_query("create or replace view main." ~ adapter.quote(res.node.alias)
                            ~ " as select * from marts." ~ adapter.quote(res.node.alias)) %}
        {% endfor %}
    {% endif %}
{% endmacro %}
