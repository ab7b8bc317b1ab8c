-- One row per workload × current offer (billing option) × throughput source, at the workload's
-- declared utilisation: hours needed and billed, every cost line, total and cost per completed
-- unit — or the reasons the configuration is excluded. Estimated rows are labelled (status
-- 'estimated', throughput_source 'estimate') and never ranked with measured ones.
select * exclude (offer_option_id) from {{ ref('int_workload_costs') }}
