"""The allowed values of the canonical tables' categorical columns, defined once.

The pandera contracts check columns against these; the adapters map each format's spellings onto
them (their alias tables name only these values); the SQL's accepted_values tests on the public
tables (sql/models/marts/schema.yml) list the same values, held to these by tests/test_vocabulary.py.
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
