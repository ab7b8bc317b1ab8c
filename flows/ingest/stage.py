"""Parse and validate landed files, and write each file's accepted and quarantined rows as Parquet."""
import json
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from flows.ingest.adapters import ADAPTERS
from flows.ingest.adapters.base import FileContext, FileRejected, ParseResult, bound_quarantine, empty_quarantine
from flows.ingest.land import LandedFile
from flows.ingest.validate import validate_details, validate_frames
from models import CONTRACTS
from provider_eval.safe_paths import child


@dataclass(frozen=True)
class FileOutcome:
    """What became of one file: where its rows were written and how many went where."""

    source_name: str
    format: str
    table: str
    file_sha256: str
    original_path: str
    first_seen_at: str
    status: str  # loaded | rejected | duplicate
    reason: str | None
    rows_in: int
    rows_accepted: int
    rows_quarantined: int
    accepted_parquet: str | None
    quarantine_parquet: str | None
    # Detail tables written for this file (e.g. benchmark_requests): table → Parquet path.
    detail_parquets: dict = field(default_factory=dict)


def stage_file(landed: LandedFile, fmt: str, defaults: dict, staging_dir: Path) -> FileOutcome:
    """Run the format's adapter and its contract on one file; never raises for bad input."""
    return stage_files([(landed, fmt, defaults)], staging_dir)[0]


@dataclass
class _Parsed:
    """One file after its adapter ran, waiting for its contract check."""

    landed: LandedFile
    ctx: FileContext
    adapter: object
    base: dict
    parsed: ParseResult


def _context(landed: LandedFile, defaults: dict) -> FileContext:
    """What the adapter may know about a landed file besides its bytes."""
    return FileContext(
        path=Path(landed.landed_path), source_name=landed.source_name,
        original_name=Path(landed.original_path).name, file_sha256=landed.file_sha256,
        first_seen_at=landed.first_seen_at, defaults=defaults, original_path=landed.original_path,
        companions={c["original_path"]: c["landed_path"] for c in landed.companions},
    )


def _outcome(landed: LandedFile, fmt: str, ctx: FileContext, result: ParseResult | FileRejected) -> _Parsed | FileOutcome:
    """An adapter's result for one file: its parsed rows waiting for the contract, or its rejection."""
    adapter = ADAPTERS[fmt]
    base = dict(source_name=landed.source_name, format=fmt, table=adapter.table,
                file_sha256=landed.file_sha256, original_path=landed.original_path,
                first_seen_at=landed.first_seen_at)
    if isinstance(result, FileRejected):
        return FileOutcome(**base, status="rejected", reason=f"{result.reason_code}: {result.detail}",
                           rows_in=0, rows_accepted=0, rows_quarantined=0,
                           accepted_parquet=None, quarantine_parquet=None)
    return _Parsed(landed, ctx, adapter, base, result)


def parse_file(landed: LandedFile, fmt: str, defaults: dict) -> _Parsed | FileOutcome:
    """Run the format's adapter on one file: the parsed rows, or the file's rejection."""
    ctx = _context(landed, defaults)
    try:
        result = ADAPTERS[fmt].parse(ctx)
    except FileRejected as exc:
        result = exc
    return _outcome(landed, fmt, ctx, result)


def parse_files(batch: list[tuple[LandedFile, str, dict]]) -> list[_Parsed | FileOutcome]:
    """parse_file for each file, in order; a format that parses many files at once gets each source's together."""
    together: dict[tuple, list[int]] = {}
    out: list = [None] * len(batch)
    for i, (landed, fmt, defaults) in enumerate(batch):
        if ADAPTERS[fmt].parse_many is None:
            out[i] = parse_file(landed, fmt, defaults)
        else:
            key = (fmt, landed.source_name, json.dumps(defaults, sort_keys=True, default=str))
            together.setdefault(key, []).append(i)
    for (fmt, _, _), members in together.items():
        ctxs = [_context(batch[i][0], batch[i][2]) for i in members]
        for i, ctx, result in zip(members, ctxs, ADAPTERS[fmt].parse_many(ctxs)):
            out[i] = _outcome(batch[i][0], fmt, ctx, result)
    return out


def stage_files(batch: list[tuple[LandedFile, str, dict]], staging_dir: Path) -> list[FileOutcome]:
    """stage_file for a batch of files: parsed (a source's files together where the format can), the
    contracts checked per table at once."""
    parsed = parse_files(batch)
    ok = [p for p in parsed if isinstance(p, _Parsed)]
    checked: dict[int, tuple[pl.DataFrame, pl.DataFrame]] = {}
    for table in {p.adapter.table for p in ok}:
        mine = [i for i, p in enumerate(ok) if p.adapter.table == table]
        results = validate_frames([ok[i].parsed.accepted for i in mine], CONTRACTS[table])
        checked.update(zip(mine, results))
    # Detail rows belong to accepted rows only; the adapter checks them, the contract proves it.
    for table in {t for p in ok for t in p.parsed.details}:
        validate_details([p.parsed.details[table] for p in ok if table in p.parsed.details], CONTRACTS[table])
    outcomes, position = [], {id(p): i for i, p in enumerate(ok)}
    for p in parsed:
        outcomes.append(p if isinstance(p, FileOutcome) else _write(p, *checked[position[id(p)]], staging_dir))
    return outcomes


def _write(p: _Parsed, accepted: pl.DataFrame, contract_rejects: pl.DataFrame, staging_dir: Path) -> FileOutcome:
    """Quarantine lineage, the row-conservation proof, and the file's Parquet outputs."""
    landed, ctx, parsed = p.landed, p.ctx, p.parsed
    quarantined = pl.concat([parsed.quarantined, contract_rejects]) if contract_rejects.height else parsed.quarantined
    if quarantined.height == 0:
        quarantined = empty_quarantine()
    # Every adapter's rejects, one rule: a flood of distinct bad values keeps its rows, not their bytes.
    quarantined = bound_quarantine(quarantined).with_columns(
        pl.lit(landed.source_name).alias("source_name"),
        pl.lit(ctx.original_name).alias("source_file"),
        pl.lit(landed.file_sha256).alias("file_sha256"),
    )
    # Row conservation is a contract, not a hope: every input row is accepted or quarantined.
    if accepted.height + quarantined.height != parsed.rows_in:
        raise AssertionError(
            f"{ctx.original_name}: {parsed.rows_in} rows in, {accepted.height} accepted + "
            f"{quarantined.height} quarantined"
        )
    staging_dir.mkdir(parents=True, exist_ok=True)
    stem = child(staging_dir, f"{landed.source_name}.{landed.file_sha256[:16]}")
    accepted_path = Path(f"{stem}.{p.adapter.table}.parquet")
    quarantine_path = Path(f"{stem}.quarantine.parquet")
    accepted.write_parquet(accepted_path)
    quarantined.write_parquet(quarantine_path)
    details = {}
    for table, frame in parsed.details.items():
        details[table] = f"{stem}.{table}.parquet"
        frame.write_parquet(details[table])
    return FileOutcome(**p.base, status="loaded", reason=None, rows_in=parsed.rows_in,
                       rows_accepted=accepted.height, rows_quarantined=quarantined.height,
                       accepted_parquet=str(accepted_path), quarantine_parquet=str(quarantine_path),
                       detail_parquets=details)
