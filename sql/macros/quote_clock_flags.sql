{# The quote flags that depend on when the refresh runs, not on the observation alone: one
   definition for int_quote_latest's select and for the update an incremental build runs on the
   rows it kept. #}

{% macro quote_is_expired(refreshed_at) -%}
    coalesce(valid_until < {{ refreshed_at }}::date, false)
{%- endmacro %}

{% macro quote_is_not_yet_valid(refreshed_at) -%}
    coalesce(valid_from > {{ refreshed_at }}::date, false)
{%- endmacro %}

{# max_quote_age_days comes from sources.yaml (settings or the source); null = no age limit. #}
{% macro quote_is_too_old(refreshed_at) -%}
    coalesce(observed_at < {{ refreshed_at }} - to_days(max_quote_age_days), false)
{%- endmacro %}

{# A row whose stored flags are not what the clock at refreshed_at says. #}
{% macro quote_clock_flags_differ(refreshed_at) -%}
    (is_expired <> {{ quote_is_expired(refreshed_at) }}
        or is_not_yet_valid <> {{ quote_is_not_yet_valid(refreshed_at) }}
        or is_too_old <> {{ quote_is_too_old(refreshed_at) }})
{%- endmacro %}

{# Post-hook of int_quote_latest: the kept rows' flags as of this refresh
   (only rows whose flag changed are written). A no-op statement on a full build, which computed
   them all. #}
{% macro refresh_quote_clock_flags() -%}
    {%- if is_incremental() -%}
    {%- set now = "(select refreshed_at from " ~ source('raw', 'refresh') ~ ")" -%}
    update {{ this }} set
        is_expired = {{ quote_is_expired(now) }},
        is_not_yet_valid = {{ quote_is_not_yet_valid(now) }},
        is_too_old = {{ quote_is_too_old(now) }}
    where {{ quote_clock_flags_differ(now) }}
    {%- else -%}
    select 1
    {%- endif -%}
{%- endmacro %}
