"""Files parsed together in one batch must give exactly what each gives parsed alone."""
from pathlib import Path

from flows.ingest import stage
from flows.ingest.land import LandedFile, sha256_of


def landed_batch(paths: list[Path], source: str, fmt: str, defaults: dict) -> list[tuple[LandedFile, str, dict]]:
    """The files as one source's batch, each received on its own day (a per-file fact mixed up between files shows)."""
    return [(LandedFile(source, sha256_of(p), str(p), str(p), f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}T06:00:00+00:00"),
             fmt, defaults) for i, p in enumerate(paths)]


def assert_together_equals_alone(batch: list) -> list:
    """stage.parse_files(batch) against stage.parse_file per file: rows in, accepted (and its schema),
    quarantined and detail rows all equal, or the same whole-file rejection. Returns the batch's results."""
    together = stage.parse_files(batch)
    assert len(together) == len(batch)
    for item, got in zip(batch, together):
        alone = stage.parse_file(*item)
        name = item[0].original_path
        assert type(got) is type(alone), name
        if isinstance(alone, stage.FileOutcome):  # rejected whole: the same reason
            assert got == alone, name
            continue
        assert got.parsed.rows_in == alone.parsed.rows_in, name
        assert got.parsed.accepted.equals(alone.parsed.accepted), name
        assert got.parsed.accepted.schema == alone.parsed.accepted.schema, name
        assert got.parsed.quarantined.equals(alone.parsed.quarantined), name
        assert got.parsed.details.keys() == alone.parsed.details.keys(), name
        for table, frame in alone.parsed.details.items():
            assert got.parsed.details[table].equals(frame), (name, table)
    return together
