"""pandera data contracts: one DataFrameModel per canonical table, checked on collected polars frames."""
from models.benchmarks import BenchmarkRequest, BenchmarkRun
from models.model_configs import ModelConfig
from models.offers import QuoteObservation
from models.validations import HardwareValidation, ValidationGpu

# canonical table name (as the adapters emit it) → its contract
CONTRACTS = {
    "quote_observations": QuoteObservation,
    "benchmark_runs": BenchmarkRun,
    "benchmark_requests": BenchmarkRequest,
    "model_configs": ModelConfig,
    "hardware_validations": HardwareValidation,
    "validation_gpus": ValidationGpu,
}
