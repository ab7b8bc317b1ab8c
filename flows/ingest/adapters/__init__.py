"""Format adapters: one module per format id, each mapping a file to a canonical frame."""
from flows.ingest.adapters import quote_csv, quote_yaml, run_csv
from flows.ingest.adapters.base import Adapter

ADAPTERS: dict[str, Adapter] = {
    a.format: a
    for a in (
        Adapter("quote-csv", "quotes", "quote_observations", quote_csv.parse),
        Adapter("run-csv", "benchmarks", "benchmark_runs", run_csv.parse),
        Adapter("quote-yaml", "quotes", "quote_observations", quote_yaml.parse),
    )
}
