"""The report's reads of the published warehouse: one SQL statement per table or chart."""

# A short configuration label; the offer id is added only where the short one would be ambiguous.
CONFIG_LABEL = """gpu_count || '× ' || gpu_model || ' · ' || provider || ' · ' || billing_model
    || case when count(*) over (partition by workload_id, provider, gpu_model, gpu_count, billing_model) > 1
            then ' · ' || offer_id else '' end"""

WORKLOADS_SQL = """
    select workload_id, any_value(unit) as unit,
           count(*) filter (where status = 'ranked') as ranked,
           count(*) filter (where status = 'excluded') as excluded
    from workload_costs group by all
    -- Workloads with a ranking first: the answer before the gaps.
    order by ranked = 0, workload_id"""

RANKED_SQL = f"""
    select rank, {CONFIG_LABEL} as configuration, offer_id, cost_per_unit_usd::double as cost_per_unit_usd,
           total_cost_usd::double as total_cost_usd, hours_billed::double as hours_billed,
           cost_per_million_units_usd::double as cost_per_million_units_usd
    from rankings where workload_id = $1 order by rank"""

# Lower-confidence rows, shown apart from the measured ranking and labelled as estimates.
ESTIMATES_SQL = """
    select rank, config_id as configuration, offer_id, {cost} as "{cost_label}",
           total_cost_usd, hours_billed, estimate_basis
    from estimate_rankings where workload_id = $1 order by rank"""

# How the ranking moves with price and utilisation (ranking_sensitivity).
SENSITIVITY_SQL = """
    select s.rank, r.config_id as configuration, s.usd_per_gpu_hour as "$/GPU-h today",
           s.break_even_usd_per_gpu_hour as "break-even $/GPU-h", s.break_even_change_pct as "price change %",
           s.usd_per_node_month as "$/node-month today",
           s.break_even_usd_per_node_month as "break-even $/node-month",
           s.break_even_utilisation as "beats on-demand above utilisation",
           s.rank_at_30pct as "rank @30 %", s.rank_at_60pct as "rank @60 %", s.rank_at_100pct as "rank @100 %"
    from ranking_sensitivity as s
    join rankings as r using (workload_id, rank)
    where s.workload_id = $1 order by s.rank"""

# Units whose cost per unit is a string of zeros: shown per million (as the CLI does).
PER_MILLION_UNITS = {"output_tokens", "total_tokens"}

EXCLUDED_SQL = """
    select provider, offer_id, gpu_model, gpu_count, billing_model,
           array_to_string(exclusion_reasons, ', ') as reasons,
           -- Runs that came close and why they do not count (engine, shape, SLO), when there were any.
           benchmark_match_detail as "benchmark runs considered"
    from workload_costs where workload_id = $1 and status = 'excluded'
    order by reasons, provider, offer_id, billing_model"""

# Per ranked configuration: median request latency of its evidence runs where benchmark_requests has
# any, else the hours the workload takes; then which points no other point beats on both axes.
COST_VS_TIME_SQL = f"""
    with ranked as (
        select * from rankings where workload_id = $1
    ),

    evidence as (
        select r.workload_id, r.offer_id, r.provider, r.billing_model, unnest(r.benchmark_run_ids) as run_id
        from ranked as r
    ),

    latency as (
        select e.workload_id, e.offer_id, e.provider, e.billing_model, median(q.latency_ms) as p50_latency_ms
        from evidence as e join benchmark_requests as q on q.run_id = e.run_id
        where q.latency_ms is not null
        group by all
    ),

    points as (
        select {CONFIG_LABEL} as configuration, r.offer_id, r.cost_per_unit_usd::double as cost_per_unit_usd,
               l.p50_latency_ms, r.hours_needed::double as hours_needed,
               r.cost_per_million_units_usd::double as cost_per_million_units_usd
        from ranked as r left join latency as l using (workload_id, offer_id, provider, billing_model)
    ),

    chosen as (
        select *,
               case when count(p50_latency_ms) over () > 0 then p50_latency_ms else hours_needed end as x_value,
               count(p50_latency_ms) over () > 0 as is_latency
        from points
    ),

    plotted as (
        select * from chosen where x_value is not null
    ),

    final as (
        select p.*,
               case when exists (
                   select 1 from plotted as o
                   where o.x_value <= p.x_value and o.cost_per_unit_usd <= p.cost_per_unit_usd
                     and (o.x_value < p.x_value or o.cost_per_unit_usd < p.cost_per_unit_usd)
               ) then 'dominated' else 'on the Pareto front' end as front
        from plotted as p
    )

    select * from final order by x_value, cost_per_unit_usd"""

MEMORY_FIT_SQL = """
    select workload_id, gpu_model, bool_or(fits) as fits, min(min_gpus) as min_gpus
    from memory_fit group by all order by all"""

PRICE_HISTORY_SQL = """
    select gpu_model, provider || ' · ' || offer_id || ' · ' || billing_model as series,
           observed_at, usd_per_gpu_hour::double as usd_per_gpu_hour
    from offer_history where usd_per_gpu_hour is not null order by gpu_model, series, observed_at"""

VALIDATIONS_SQL = """
    select host, offer_id, verdict, reasons, validated_at
    from hardware_validations
    where is_latest_for_offer  -- the one definition of latest (int_latest_validations), as ranking uses
    order by validated_at desc"""

FRESHNESS_SQL = """
    select source_name, count(*) as offers, count(*) filter (where is_stale) as stale_offers,
           min(observed_at) as oldest_observed_at, max(observed_at) as newest_observed_at
    from offers group by all order by source_name"""

MANIFEST_SQL = """
    select source_name, status, count(*) as files, sum(rows_in) as rows_in,
           sum(rows_accepted) as rows_accepted, sum(rows_quarantined) as rows_quarantined,
           max(first_seen_at) as last_file_seen_at
    from ingest_manifest group by all order by all"""

REJECTED_SQL = """
    select source_name, original_path, reason from ingest_manifest where status = 'rejected' order by all"""

QUARANTINE_SQL = """
    select reason_code, source_name, count(*) as rows from quarantine group by all order by rows desc, reason_code, source_name"""
