{# int_workload_ranks is incremental per workload (docs/production.md, "Incremental refresh"). A
   workload's ranks depend on nothing but its workload_costs rows, and each of those rows on its
   option's costed inputs, its clock state and its config_id (int_workload_costs carries the first
   two as hashes); observed_at moves with every scrape and decides no rank, so the public views join
   it on. A build from the published warehouse re-ranks only the workloads whose rows changed. #}

{# One row per workload with costed rows: a hash of every row that decides its ranks (a multiset). #}
{% macro workload_ranking_fingerprints() -%}
    select workload_id,
        sum(hash(offer_option_id, throughput_source, costed_inputs_hash, clock_state_hash, config_id))
            as ranking_inputs_hash
    from {{ ref('int_workload_costs') }}
    group by workload_id
{%- endmacro %}

{# Pre-hook of int_workload_ranks: delete the ranks of workloads whose fingerprint changed or that
   are gone (compared per workload, on each one's kept fingerprint). A no-op on a full build. #}
{% macro delete_reranked_workloads() -%}
    {%- if is_incremental() -%}
    delete from {{ this }}
    where workload_id in (
        select t.workload_id
        from (select distinct workload_id, ranking_inputs_hash from {{ this }}) as t
        anti join ({{ workload_ranking_fingerprints() }}) as n
            on n.workload_id = t.workload_id and n.ranking_inputs_hash = t.ranking_inputs_hash
    )
    {%- else -%}
    select 1
    {%- endif -%}
{%- endmacro %}

{# Workloads this build ranks (alias: an int_workload_costs row): in an incremental build those
   with no ranks left after the pre-hook; every workload in a full build. #}
{% macro workload_is_unranked(alias) -%}
    {%- if is_incremental() -%}
    {{ alias }}.workload_id not in (select distinct workload_id from {{ this }})
    {%- else -%}
    true
    {%- endif -%}
{%- endmacro %}

{# A public view of ranked rows (rankings, estimate_rankings, workload_costs): the kept rows of
   `relation` less its internal columns, with each option's observed_at as of this refresh in the
   place of `column` (a left join: a row is never lost; sql/tests/assert_costed_options_are_current.sql
   checks each one has its option). #}
{% macro with_current_observed_at(relation, column, internal, where=none) -%}
    select r.* exclude ({{ internal | join(', ') }}) replace (o.observed_at as {{ column }})
    from {{ relation }} as r
    left join (select offer_option_id, observed_at from {{ ref('int_offers_now') }}) as o using (offer_option_id)
    {%- if where %}
    where {{ where }}
    {%- endif %}
{%- endmacro %}
