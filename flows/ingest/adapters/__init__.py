"""Format adapters: one module per format id, each mapping a file to a canonical frame."""
from flows.ingest.adapters import model_config, probe_json, quote_csv, quote_yaml, run_csv
from flows.ingest.adapters import (
    inferencex_agg, mlperf_summary, sglang_serving, vllm_serve, vllm_serve_log, vllm_throughput,
)
from flows.ingest.adapters import (digitalocean_sizes, gpuhunt_catalog, hotaisle_available, runpod_gputypes,
                                   skypilot_catalog, vastai_offers, vultr_plans)
from flows.ingest.adapters.base import Adapter

ADAPTERS: dict[str, Adapter] = {
    a.format: a
    for a in (
        Adapter("quote-csv", "quotes", "quote_observations", quote_csv.parse, parse_many=quote_csv.parse_many),
        Adapter("run-csv", "benchmarks", "benchmark_runs", run_csv.parse),
        Adapter("quote-yaml", "quotes", "quote_observations", quote_yaml.parse),
        Adapter("vllm-serve", "benchmarks", "benchmark_runs", vllm_serve.parse, parse_many=vllm_serve.parse_many,
                ignores=vllm_serve.is_pytorch_sibling),
        Adapter("vllm-serve-log", "benchmarks", "benchmark_runs", vllm_serve_log.parse),
        Adapter("vllm-throughput", "benchmarks", "benchmark_runs", vllm_throughput.parse,
                ignores=vllm_serve.is_pytorch_sibling),
        Adapter("sglang-serving", "benchmarks", "benchmark_runs", sglang_serving.parse),
        Adapter("mlperf-summary", "benchmarks", "benchmark_runs", mlperf_summary.parse,
                companions=mlperf_summary.system_json_path),
        Adapter("inferencex-agg", "benchmarks", "benchmark_runs", inferencex_agg.parse),
        # Provider catalogs and APIs (docs/formats/catalogs.md).
        Adapter("skypilot-catalog", "quotes", "quote_observations", skypilot_catalog.parse),
        Adapter("digitalocean-sizes", "quotes", "quote_observations", digitalocean_sizes.parse),
        Adapter("vultr-plans", "quotes", "quote_observations", vultr_plans.parse),
        Adapter("hotaisle-available", "quotes", "quote_observations", hotaisle_available.parse),
        Adapter("runpod-gputypes", "quotes", "quote_observations", runpod_gputypes.parse),
        Adapter("vastai-offers", "quotes", "quote_observations", vastai_offers.parse),
        Adapter("gpuhunt-catalog", "quotes", "quote_observations", gpuhunt_catalog.parse),
        # A model the catalog lacks, from its Hugging Face config.json (docs/formats/model-config.md).
        Adapter("model-config", "models", "model_configs", model_config.parse),
        # validate-host evidence under <warehouse dir>/validations/, read by every refresh (docs/validation.md).
        Adapter("probe-json", "validations", "hardware_validations", probe_json.parse,
                companions=probe_json.companion_probe),
    )
}
