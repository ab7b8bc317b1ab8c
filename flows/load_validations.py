"""The implicit sources under <warehouse dir>/validations/ that every refresh reads besides sources.yaml."""
from pathlib import Path

from flows.ingest.adapters import ADAPTERS
from flows.ingest.sources import Source

# The evidence records' source name (quarantine rows, ingest_manifest, input_files).
EVIDENCE_SOURCE = "hardware-validations"


def validation_evidence_source(directory: Path) -> list[Source]:
    """validate-host's evidence records (val-*.json, format probe-json), landed and checked like any input."""
    directory = Path(directory)
    if not any(directory.glob("val-*.json")):
        return []  # no validation yet: not a source that matches nothing (which warns)
    return [Source(name=EVIDENCE_SOURCE, kind="validations", format="probe-json", path="val-*.json",
                   base_dir=directory, line=0)]


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


def validation_sources(directory: Path) -> list[Source]:
    """Every implicit source of the validations folder: the evidence records, then the benchmark results."""
    return validation_evidence_source(directory) + validation_benchmark_sources(directory)
