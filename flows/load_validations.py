"""Load hardware-validation evidence records into raw_hardware_validations."""
from pathlib import Path

import duckdb
import polars as pl

from flows.ingest.adapters import ADAPTERS
from flows.ingest.sources import Source
from flows.probe.evidence import read_records

VALIDATION_SCHEMA = {
    "validation_id": pl.String, "host": pl.String, "port": pl.Int64, "user": pl.String,
    "offer_id": pl.String, "provider": pl.String, "verdict": pl.String, "reasons": pl.List(pl.String),
    "validated_at": pl.String, "quoted_gpu_model": pl.String, "quoted_gpu_count": pl.Int64,
    "gpu_models_found": pl.List(pl.String), "gpu_count_found": pl.Int64, "logical_device_count": pl.Int64,
    "vram_bytes_per_gpu_min": pl.Int64, "rocm_version": pl.String, "partition_modes": pl.List(pl.String),
    "gemm_bf16_8192_tflops": pl.Float64, "hbm_copy_gbps": pl.Float64, "findings": pl.List(pl.String),
    "host_key_fingerprint": pl.String, "probe_sha256": pl.String, "evidence_path": pl.String,
}


def _row(record: dict, path: str) -> dict:
    measured = record.get("measured") or {}
    return {
        **{k: record.get(k) for k in ("validation_id", "host", "port", "user", "offer_id", "provider", "verdict",
                                      "reasons", "validated_at", "quoted_gpu_model", "quoted_gpu_count",
                                      "findings", "host_key_fingerprint", "probe_sha256")},
        "gpu_models_found": measured.get("gpu_models"), "gpu_count_found": measured.get("gpu_count"),
        "logical_device_count": measured.get("logical_device_count"),
        "vram_bytes_per_gpu_min": measured.get("vram_bytes_per_gpu_min"),
        "rocm_version": measured.get("rocm_version"), "partition_modes": measured.get("partition_modes"),
        "gemm_bf16_8192_tflops": measured.get("gemm_bf16_8192_tflops"), "hbm_copy_gbps": measured.get("hbm_copy_gbps"),
        "evidence_path": path,
    }


def load_validations(con: duckdb.DuckDBPyConnection, directory: Path) -> list[tuple[str, str]]:
    """Create raw_hardware_validations from directory's records; return (file, reason) for unusable ones."""
    records, rejected = read_records(directory) if Path(directory).is_dir() else ([], [])
    rows = [_row(r, str(Path(directory) / f"{r['validation_id']}.json")) for r in records]
    frame = pl.DataFrame(rows, schema=VALIDATION_SCHEMA, strict=False)
    con.register("__validations", frame.to_arrow())
    con.execute("create table raw_hardware_validations as select * from __validations")
    con.unregister("__validations")
    return rejected


def validation_benchmark_sources(directory: Path) -> list[Source]:
    """Result files of representative benchmarks run during validations, one source per format.

    `validate-host --workload` keeps them under validations/benchmarks/<format id>/; the refresh
    ingests them like any declared benchmark file (their --metadata names provider, GPU and count).
    """
    root = Path(directory) / "benchmarks"
    if not root.is_dir():
        return []
    return [Source(name=f"validation-benchmarks-{fmt.name}", kind="benchmarks", format=fmt.name,
                   path="*.json", base_dir=fmt, line=0)
            for fmt in sorted(root.iterdir()) if fmt.is_dir() and fmt.name in ADAPTERS]
