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

{# The current offer options int_workload_costs does not hold after its pre-hook: the only ones an
   incremental build costs (costed_option_is_new), as a query to narrow the cost lines read before
   they are joined (DuckDB otherwise read all 1M wide lines at SCALE=default and dropped them at the
   end: 0.6 -> 0.1 s). None in a full build: every line is read. #}
{% macro options_not_costed_yet() -%}
    {%- if is_incremental() -%}
    {{ return("select offer_option_id from " ~ ref('int_offers_now') ~ " except select offer_option_id from " ~ this) }}
    {%- endif -%}
    {{ return(none) }}
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
   only where nothing but a benchmark is missing. What int_workload_costs, int_sensitivity_ranks and
   int_ranking_sensitivity read. options: a query of the offer_option_ids to read the lines of (none:
   every option), applied to the lines before anything is joined to them. #}
{% macro workload_cost_lines_now(options=none) -%}
    select
        c.* exclude (reasons_before_stale, reasons_after_stale),
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
    from {% if options is none %}{{ ref('int_workload_cost_lines') }}{% else -%}
        (select * from {{ ref('int_workload_cost_lines') }} where offer_option_id in ({{ options }})){% endif %} as c
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

{# Whether an incremental build may skip the model's select altogether: it holds rows and every
   one carries the inputs' hash as they are now. Asked when dbt compiles the model, just before it
   runs (its inputs are built by then): DuckDB would otherwise still compute the select's
   independent steps for nothing (int_workload_closest_runs: 0.7 s of an incremental refresh at
   SCALE=default). False outside a run (parse, docs) and in a full build. #}
{% macro inputs_unchanged(inputs) -%}
    {%- if execute and is_incremental() -%}
        {%- set same = run_query("select count(*) > 0 and bool_and(inputs_hash = (" ~ inputs_fingerprint(inputs)
                                 ~ ")) from " ~ this) -%}
        {{ return(same.columns[0].values()[0] is true) }}
    {%- endif -%}
    {{ return(false) }}
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

{# What int_shape_measured_throughputs reads (its pre-hook and its rows' inputs_hash). #}
{% macro shape_throughput_inputs() -%}
    {{ return([
        "select * from " ~ ref('int_shape_configurations'),
        "select * from " ~ ref('int_workload_throughput'),
    ]) }}
{%- endmacro %}

{# What int_memory_requirements reads through int_memory_request_facts, besides reference data
   (a change to that rebuilds everything): its pre-hook and its rows' inputs_hash. #}
{% macro memory_requirement_inputs() -%}
    {{ return([
        "select * from " ~ ref('int_fit_requests'),
        "select * from " ~ ref('int_llm_models'),
        "select * from " ~ ref('int_gpu_memory'),
        "select * from " ~ ref('stg_conventions'),
    ]) }}
{%- endmacro %}

{# What int_compat_candidates reads through int_compat_release_facts and int_compat_stacks (both
   ephemeral: a pre-hook cannot read them), besides reference data. #}
{% macro compat_candidate_inputs() -%}
    {{ return(["select * from " ~ ref('int_compat_requests')]) }}
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

{# The cheap end is incremental too (int_workload_costs, int_sensitivity_ranks, int_ranking_sensitivity;
   the public workload_costs and ranking_sensitivity are views of them). A workload_costs row depends
   on its option's costed inputs (costed_inputs_hash) and on its clock state: staleness, the other
   sources that list it, and the quote's age in whole days as of this refresh. Its observed_at moves
   with every scrape but decides nothing, so it is not kept: the public view joins each option's
   current one on (a re-listed offer is not recosted); its config_id depends on the other offers
   under the same key, so every id is checked again after the new rows are in (a post-hook). #}

{# Each current offer option's clock: observed_at, the quote's age in whole days as of this refresh
   (null when the quote states no date: its observed_at is only when the file landed), and one hash
   of what the clock decides in workload_costs. #}
{% macro option_clock_states() -%}
    select
        offer_option_id, observed_at, quote_age_days,
        hash(is_stale, stale_reason, also_seen_in, quote_age_days) as clock_state_hash
    from (
        select
            offer_option_id, observed_at, is_stale, stale_reason, also_seen_in,
            case when observed_at_basis != 'landed_at'
                then datediff('day', observed_at, (select refreshed_at from {{ source('raw', 'refresh') }})) end
                as quote_age_days
        from {{ ref('int_offers_now') }}
    )
{%- endmacro %}

{# Pre-hook of int_workload_costs: delete the rows of options whose costed inputs or clock state
   changed, or that are gone (compared on each option's distinct states, not on every row). #}
{% macro delete_changed_workload_costs() -%}
    {%- if is_incremental() -%}
    delete from {{ this }}
    where offer_option_id in (
        select t.offer_option_id
        from (select distinct offer_option_id, costed_inputs_hash, clock_state_hash from {{ this }}) as t
        anti join (
            select f.offer_option_id, f.costed_inputs_hash, s.clock_state_hash
            from ({{ costed_option_fingerprints() }}) as f
            join ({{ option_clock_states() }}) as s using (offer_option_id)
        ) as n
            on n.offer_option_id = t.offer_option_id and n.costed_inputs_hash = t.costed_inputs_hash
            and n.clock_state_hash = t.clock_state_hash
    )
    {%- else -%}
    select 1
    {%- endif -%}
{%- endmacro %}

{# A configuration id a user can copy from `rank` into `explain WORKLOAD CONFIG`, for each row of
   `relation` (workload × option × throughput source): provider/gpu_model/gpu_count/billing_model
   [/tier][/<term>h], plus /offer_id only where two offers share that key within a workload and
   throughput source (e.g. two regions). The shared keys come from a narrow aggregate: a window over
   the million wide rows sorted all of them. #}
{% macro workload_config_ids(relation) -%}
    with named as (
        select
            workload_id, throughput_source, offer_option_id, offer_id,
            concat_ws('/', provider, gpu_model, gpu_count::varchar, billing_model, tier,
                round(commitment_term_hours)::bigint::varchar || 'h') as base_config_id
        from {{ relation }}
    ),

    shared as (
        select workload_id, throughput_source, base_config_id
        from named
        group by all
        having min(offer_id) != max(offer_id)
    )

    select
        n.workload_id, n.throughput_source, n.offer_option_id,
        n.base_config_id || case when s.base_config_id is not null then '/' || n.offer_id else '' end as config_id
    from named as n
    left join shared as s using (workload_id, throughput_source, base_config_id)
{%- endmacro %}

{# Post-hook of int_workload_costs: every config id again (a new offer under a key another offer had
   alone gives both an /offer_id suffix). #}
{% macro update_workload_config_ids() -%}
    update {{ this }} as t set config_id = i.config_id
    from ({{ workload_config_ids(this) }}) as i
    where i.workload_id = t.workload_id and i.throughput_source = t.throughput_source
        and i.offer_option_id = t.offer_option_id and t.config_id is distinct from i.config_id
{%- endmacro %}

{# What the sensitivity models read (their pre-hooks and their rows' inputs_hash): every option's
   costed inputs (they decide every scenario's cost line), and each option's staleness (it decides
   which lines are ranked) and key (the ties' order). A scrape that changes no price changes none. #}
{% macro sensitivity_inputs() -%}
    {{ return([
        costed_option_fingerprints(),
        "select offer_option_id, stale_reason, provider, offer_id, billing_model, tier, commitment_term_hours,"
            ~ " source_name from " ~ ref('int_offers_now'),
    ]) }}
{%- endmacro %}
