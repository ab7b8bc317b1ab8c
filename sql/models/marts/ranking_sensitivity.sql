-- One row per workload × ranked configuration: the break-even price at which a challenger would
-- overtake the leader (for the leader: the price at which the runner-up would overtake it), and
-- the configuration's rank and cost per completed unit at 30 / 60 / 100 % utilisation.
-- A view of int_ranking_sensitivity (rebuilt only when its inputs changed), less its inputs_hash.
{{ config(materialized='view') }}
select * exclude (inputs_hash) from {{ ref('int_ranking_sensitivity') }}
