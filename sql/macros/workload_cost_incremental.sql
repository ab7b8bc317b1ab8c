{# The workload cost models are incremental per offer option (docs/production.md, "Incremental
   refresh"). Every scrape lists every offer again with a new observed_at, so the 4M cost lines must
   not depend on the clock: int_workload_configurations and int_workload_cost_lines carry only what
   changes a cost (the offer's costed columns below, its shape's on-demand price, the workloads,
   throughputs, compat, validations, scenarios and conventions), fingerprinted per option as
   costed_inputs_hash. A build from the published warehouse deletes the options whose fingerprint
   changed (or that are gone) and costs only the options it no longer holds; a change to anything
   shared (workloads.yaml, a benchmark run, conventions) changes every fingerprint, so everything is
   recomputed. The clock columns (observed_at, staleness, also_seen_in) join on at the cheap end
   (workload_cost_lines_now). A full build computes every row and runs none of the deletes. #}

{# The columns of int_offers_now the cost model reads: int_workload_configurations selects from
   exactly these, so a column added there without being added here does not compile. #}
{% macro costed_offer_columns() -%}
    offer_option_id, offer_id, provider, gpu_model, gpus_per_node, billing_model, tier,
    commitment_term_hours, usd_per_gpu_hour, usd_per_node_hour, price_amount, currency, price_unit,
    price_scope, billing_granularity, billing_granularity_s, min_term_hours, storage_usd_per_gb_month,
    egress_usd_per_gb, licence_usd_per_hour, setup_fee_usd, support_usd_per_month, scope_reason,
    price_band_reason, warnings, scope_detail, source_name, rocm_version, os, kernel,
    amdgpu_driver_version, fx_rate_date, usd_per_node_month, vendor, observed_at_basis
{%- endmacro %}

{# Each provider's cheapest on-demand node-hour per GPU model and node size: what spot, monthly and
   committed prices of the same configuration are compared with (int_workload_cost_lines). #}
{% macro on_demand_prices() -%}
    select provider, gpu_model, gpus_per_node, min(usd_per_node_hour) as on_demand_usd_per_node_hour
    from {{ ref('int_offers_now') }} where billing_model = 'on_demand' and usd_per_node_hour > 0
    group by all
{%- endmacro %}

{# One row per offer option costed now: its fingerprint (the costed columns, its shape's on-demand
   price and one hash of every shared input; sum(hash(row)) is a hash of each table as a multiset). #}
{% macro costed_option_fingerprints() -%}
    select o.offer_option_id, hash(o, od.on_demand_usd_per_node_hour, g.shared_hash) as costed_inputs_hash
    from (select {{ costed_offer_columns() }} from {{ ref('int_offers_now') }}) as o
    left join ({{ on_demand_prices() }}) as od using (provider, gpu_model, gpus_per_node)
    cross join (
        select hash(
            {%- for model in ['int_workloads', 'int_shape_measured_throughputs', 'int_shape_estimated_throughputs',
                              'int_compat_checks', 'int_latest_validations', 'int_utilisation_scenarios',
                              'stg_conventions'] %}
            (select coalesce(sum(hash(t)), 0) from {{ ref(model) }} as t){{ ',' if not loop.last }}
            {%- endfor %}
        ) as shared_hash
    ) as g
{%- endmacro %}

{# Pre-hook of int_workload_configurations: delete the options whose fingerprint changed or that are
   no longer costed. A no-op statement on a full build. #}
{% macro delete_changed_costed_options() -%}
    {%- if is_incremental() -%}
    delete from {{ this }} as t
    where not exists (
        select 1 from ({{ costed_option_fingerprints() }}) as f
        where f.offer_option_id = t.offer_option_id and f.costed_inputs_hash = t.costed_inputs_hash
    )
    {%- else -%}
    select 1
    {%- endif -%}
{%- endmacro %}

{# Pre-hook of int_workload_cost_lines: delete the lines of options whose configurations were just
   deleted (another fingerprint now, or none). A no-op statement on a full build. #}
{% macro delete_recosted_options() -%}
    {%- if is_incremental() -%}
    delete from {{ this }} as t
    where not exists (
        select 1 from (select distinct offer_option_id, costed_inputs_hash from {{ ref('int_workload_configurations') }}
            where built_by <> '{{ invocation_id }}') as c
        where c.offer_option_id = t.offer_option_id and c.costed_inputs_hash = t.costed_inputs_hash
    )
    {%- else -%}
    select 1
    {%- endif -%}
{%- endmacro %}

{# Offer options this build must cost (alias: an offers row): in an incremental build, those the
   model no longer holds after its pre-hook; every option in a full build. #}
{% macro costed_option_is_new(alias) -%}
    {%- if is_incremental() -%}
    {{ alias }}.offer_option_id not in (select distinct offer_option_id from {{ this }})
    {%- else -%}
    true
    {%- endif -%}
{%- endmacro %}

{# The cost lines as of this refresh: the clock columns of each option (int_offers_now) joined on,
   the exclusion reasons with the staleness reason in its place, the status, and estimates offered
   only where nothing but a benchmark is missing. What workload_costs, int_sensitivity_ranks and
   ranking_sensitivity read. #}
{% macro workload_cost_lines_now() -%}
    select
        c.* exclude (costed_inputs_hash, reasons_before_stale, reasons_after_stale),
        o.observed_at, o.is_stale, o.stale_reason, o.also_seen_in,
        coalesce(c.reasons_before_stale, []::varchar[])
            || case when o.stale_reason is not null then [o.stale_reason] else []::varchar[] end
            || coalesce(c.reasons_after_stale, []::varchar[]) as exclusion_reasons,
        case
            when len(c.reasons_before_stale) > 0 or len(c.reasons_after_stale) > 0 or o.stale_reason is not null
                then 'excluded'
            when c.throughput_source = 'estimate' then 'estimated'
            else 'ranked'
        end as status
    from {{ ref('int_workload_cost_lines') }} as c
    join (
        select offer_option_id, observed_at, is_stale, stale_reason, also_seen_in from {{ ref('int_offers_now') }}
    ) as o using (offer_option_id)
    where c.throughput_source = 'measured' or o.stale_reason is null
{%- endmacro %}

{# A model rebuilt only when its inputs changed (int_workload_closest_runs): one hash of every input
   (sum(hash(row)) per table, as a multiset); each row carries it as inputs_hash. The pre-hook
   deletes every row when it differs, and the model's select computes nothing while rows remain. #}
{% macro inputs_fingerprint(inputs) -%}
    select hash(
        {%- for input in inputs %}
        (select coalesce(sum(hash(t)), 0) from ({{ input }}) as t){{ ',' if not loop.last }}
        {%- endfor %}
    ) as inputs_hash
{%- endmacro %}

{% macro delete_if_inputs_changed(inputs) -%}
    {%- if is_incremental() -%}
    delete from {{ this }} where inputs_hash is distinct from ({{ inputs_fingerprint(inputs) }})
    {%- else -%}
    select 1
    {%- endif -%}
{%- endmacro %}

{# True where the model must be computed: always in a full build; in an incremental one only when
   the pre-hook emptied it. #}
{% macro inputs_changed() -%}
    {%- if is_incremental() -%}
    not exists (select 1 from {{ this }})
    {%- else -%}
    true
    {%- endif -%}
{%- endmacro %}

{# What int_workload_closest_runs reads (its pre-hook and its rows' inputs_hash). #}
{% macro closest_runs_inputs() -%}
    {{ return([
        "select * from " ~ ref('int_workloads'),
        "select * from " ~ ref('int_current_benchmark_runs'),
        "select * from " ~ ref('int_benchmark_throughputs'),
        "select * from " ~ ref('int_workload_benchmark_matches'),
        "select distinct workload_id, gpu_model, gpu_count from " ~ ref('int_workload_configurations'),
        "select * from " ~ ref('stg_conventions'),
    ]) }}
{%- endmacro %}
