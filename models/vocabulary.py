"""The allowed values of the canonical tables' categorical columns, defined once.

The pandera contracts check columns against these; the adapters map each format's spellings onto
them (their alias tables name only these values); the SQL's accepted_values tests on the public
tables (sql/models/marts/schema.yml) list the same values, held to these by tests/config/test_vocabulary.py.
"""
BILLING_MODELS = ("on_demand", "spot", "monthly", "dedicated", "reserved")
TIME_UNITS = ("second", "minute", "hour", "month")  # price units and billing granularities
PRICE_SCOPES = ("per_gpu", "per_node")
TIERS = ("community", "secure")
QUOTE_STATUSES = ("quoted", "requested")
OBSERVED_AT_BASES = ("row", "source_default", "fetched_at", "landed_at")
VIRTUALISATIONS = ("bare_metal", "passthrough", "partitioned")
# What a benchmark run or a workload counts (benchmark_runs.unit, workloads.unit).
WORK_UNITS = ("requests", "output_tokens", "total_tokens", "samples", "training_runs", "jobs")
# The load a run was measured under and a workload runs under (docs/cost-model.md "Scenario").
SCENARIOS = ("offline", "server", "interactive")
# How a workload is bought (docs/workloads.md): a quantity, a quantity by a deadline, a rate over months.
DEMAND_KINDS = ("fixed", "deadline", "sustained")
# Latency statistics: benchmark_runs has a column <metric>_<stat>_ms for each pair; a workload's SLO
# names one of them (any statistic but std, which bounds nothing).
LATENCY_METRICS = ("ttft", "tpot", "itl", "e2el")
LATENCY_STATS = ("mean", "median", "std", "p90", "p95", "p99")
