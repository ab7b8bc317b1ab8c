-- One row per workload × configuration whose throughput is estimated (no matching run; see
-- workload_costs.estimate_basis), ranked among estimates only (1 = cheapest). Lower confidence:
-- never mixed into rankings.
-- A view: the ranks are kept incrementally in int_workload_ranks; each quote's observed_at joins on.
{{ config(materialized='view') }}
{{ with_current_observed_at(ref('int_workload_ranks'), 'quote_observed_at',
       ['status', 'offer_option_id', 'ranking_inputs_hash'], where="r.status = 'estimated'") }}
