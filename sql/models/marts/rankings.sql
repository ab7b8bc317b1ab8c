-- One row per workload × feasible configuration with measured throughput, ranked by cost per
-- completed unit (1 = cheapest), with the evidence behind the number. Estimates: estimate_rankings.
-- A view: the ranks are kept incrementally in int_workload_ranks; each quote's observed_at joins on.
{{ config(materialized='view') }}
{{ with_current_observed_at(ref('int_workload_ranks'), 'quote_observed_at',
       ['status', 'estimate_basis', 'offer_option_id', 'ranking_inputs_hash'], where="r.status = 'ranked'") }}
