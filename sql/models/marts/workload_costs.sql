-- One row per workload × current offer (billing option) × throughput source, at the workload's
-- declared utilisation: hours needed and billed, every cost line, total and cost per completed
-- unit — or the reasons the configuration is excluded (int_workload_costs, less its internal columns).
-- A view: the rows are kept incrementally in int_workload_costs, not copied on every refresh, and
-- each quote's observed_at (every scrape moves it) joins on here.
{{ config(materialized='view') }}
{{ with_current_observed_at(ref('int_workload_costs'), 'observed_at',
       ['offer_option_id', 'costed_inputs_hash', 'clock_state_hash']) }}
