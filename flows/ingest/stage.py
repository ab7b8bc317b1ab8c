"""Parse and validate landed files, and write each file's accepted and quarantined rows as Parquet."""
import json
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from flows.ingest.adapters import ADAPTERS
from flows.ingest.adapters.base import FileContext, FileRejected, ParseResult
from flows.ingest.adapters.quarantine import bound_quarantine, empty_quarantine
from flows.ingest.land import LandedFile
from flows.ingest.validate import validate_details, validate_frame, validate_frames
from models import CONTRACTS
from provider_eval import progress
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


def _base(landed: LandedFile, fmt: str) -> dict:
    """The manifest fields every outcome of a file carries."""
    return dict(source_name=landed.source_name, format=fmt, table=ADAPTERS[fmt].table,
                file_sha256=landed.file_sha256, original_path=landed.original_path,
                first_seen_at=landed.first_seen_at)


def rejected(landed: LandedFile, fmt: str, reason_code: str, detail: str) -> FileOutcome:
    """The outcome of a file rejected whole: nothing of it is loaded, the manifest says why."""
    return FileOutcome(**_base(landed, fmt), status="rejected", reason=f"{reason_code}: {detail}",
                       rows_in=0, rows_accepted=0, rows_quarantined=0,
                       accepted_parquet=None, quarantine_parquet=None)


def crash(code: str, name: str, what: str, exc: BaseException) -> FileRejected:
    """An unexpected exception while handling one file, as that file's rejection (the error boundary).

    Bad input is meant to become quarantined rows or a named rejection; anything else that escapes
    an adapter or a contract check is still one file's problem, never the refresh's.
    """
    first = (str(exc).strip().splitlines() or [""])[0][:300]
    return FileRejected(code, f"{name}: {what} failed with {type(exc).__name__}: {first}")


def _outcome(landed: LandedFile, fmt: str, ctx: FileContext, result: ParseResult | FileRejected) -> _Parsed | FileOutcome:
    """An adapter's result for one file: its parsed rows waiting for the contract, or its rejection."""
    if isinstance(result, FileRejected):
        return rejected(landed, fmt, result.reason_code, result.detail)
    return _Parsed(landed, ctx, ADAPTERS[fmt], _base(landed, fmt), result)


def _guarded_parse(fmt: str, ctx: FileContext) -> ParseResult | FileRejected:
    """The adapter's result, its FileRejected, or any other exception as ADAPTER_ERROR."""
    try:
        return ADAPTERS[fmt].parse(ctx)
    except FileRejected as exc:
        return exc
    except OSError:
        raise  # the machine's problem (disk, permissions), not the file's: the refresh reports it
    except Exception as exc:  # noqa: BLE001 - the per-file error boundary
        return crash("ADAPTER_ERROR", ctx.original_name, f"the {fmt} adapter", exc)


def parse_file(landed: LandedFile, fmt: str, defaults: dict) -> _Parsed | FileOutcome:
    """Run the format's adapter on one file: the parsed rows, or the file's rejection."""
    with progress.span("parse_file", format=fmt, files=1):
        ctx = _context(landed, defaults)
        return _outcome(landed, fmt, ctx, _guarded_parse(fmt, ctx))


@progress.timed("parse_files")
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
        # One span for the whole batch, carrying how many files it parsed (the bench counts files per format).
        with progress.span("parse_file", format=fmt, files=len(members)):
            ctxs = [_context(batch[i][0], batch[i][2]) for i in members]
            try:
                results = ADAPTERS[fmt].parse_many(ctxs)
            except OSError:
                raise
            except Exception:  # noqa: BLE001 - one file broke the batch: each file alone finds which
                results = [_guarded_parse(fmt, ctx) for ctx in ctxs]
        for i, ctx, result in zip(members, ctxs, results):
            out[i] = _outcome(batch[i][0], fmt, ctx, result)
    return out


def _check_contracts(ok: list[_Parsed]) -> dict[int, tuple | FileRejected]:
    """Each parsed file's (accepted, contract rejects), or its CONTRACT_ERROR; files checked per table at once."""
    checked: dict[int, tuple | FileRejected] = {}
    for table in {p.adapter.table for p in ok}:
        mine = [i for i, p in enumerate(ok) if p.adapter.table == table]
        try:
            checked.update(zip(mine, validate_frames([ok[i].parsed.accepted for i in mine], CONTRACTS[table])))
        except Exception:  # noqa: BLE001 - one frame broke the check: each frame alone finds which
            for i in mine:
                checked[i] = _guarded(lambda: validate_frame(ok[i].parsed.accepted, CONTRACTS[table]), ok[i])
    # Detail rows belong to accepted rows only; the adapter checks them, the contract proves it.
    for table in {t for p in ok for t in p.parsed.details}:
        mine = [i for i, p in enumerate(ok) if table in p.parsed.details]
        try:
            validate_details([ok[i].parsed.details[table] for i in mine], CONTRACTS[table])
        except Exception:  # noqa: BLE001
            for i in mine:
                failed = _guarded(lambda: validate_details([ok[i].parsed.details[table]], CONTRACTS[table]), ok[i])
                if isinstance(failed, FileRejected):
                    checked[i] = failed
    return checked


def _guarded(check, p: _Parsed):
    """check()'s result, or the exception it raised as the file's CONTRACT_ERROR."""
    try:
        return check()
    except OSError:
        raise
    except Exception as exc:  # noqa: BLE001 - the per-file error boundary
        return crash("CONTRACT_ERROR", p.ctx.original_name, f"the {p.adapter.table} contract check", exc)


def stage_files(batch: list[tuple[LandedFile, str, dict]], staging_dir: Path) -> list[FileOutcome]:
    """stage_file for a batch of files: parsed (a source's files together where the format can), the
    contracts checked per table at once."""
    parsed = parse_files(batch)
    ok = [p for p in parsed if isinstance(p, _Parsed)]
    checked = _check_contracts(ok)
    outcomes, position = [], {id(p): i for i, p in enumerate(ok)}
    for p in parsed:
        if isinstance(p, FileOutcome):
            outcomes.append(p)
            continue
        result = checked[position[id(p)]]
        if not isinstance(result, FileRejected):
            try:
                result = _write(p, *result, staging_dir)
            except FileRejected as exc:
                result = exc
            except pl.exceptions.PolarsError as exc:  # quarantine frames an adapter shaped wrongly
                result = crash("ADAPTER_ERROR", p.ctx.original_name, f"the {p.adapter.format} adapter's output", exc)
        outcomes.append(rejected(p.landed, p.adapter.format, result.reason_code, result.detail)
                        if isinstance(result, FileRejected) else result)
    return outcomes


# The column a detail table shares with the row it hangs off: a detail row follows its parent, so a
# run (or validation record) the contract quarantines takes its requests (or GPUs) with it.
DETAIL_PARENT_KEYS = {"benchmark_requests": "row_number", "validation_gpus": "validation_id"}


def _of_accepted_parents(table: str, frame: pl.DataFrame, accepted: pl.DataFrame) -> pl.DataFrame:
    """The detail rows whose parent row was accepted (the adapter's accepted rows less the contract's rejects)."""
    key = DETAIL_PARENT_KEYS[table]
    return frame.join(accepted.select(pl.col(key).unique()), on=key, how="semi")


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
        raise FileRejected("ROWS_NOT_CONSERVED",
                           f"{ctx.original_name}: {parsed.rows_in} rows in, {accepted.height} accepted + "
                           f"{quarantined.height} quarantined (an adapter bug: nothing of the file is loaded)")
    staging_dir.mkdir(parents=True, exist_ok=True)
    stem = child(staging_dir, f"{landed.source_name}.{landed.file_sha256[:16]}")
    accepted_path = Path(f"{stem}.{p.adapter.table}.parquet")
    quarantine_path = Path(f"{stem}.quarantine.parquet")
    accepted.write_parquet(accepted_path)
    quarantined.write_parquet(quarantine_path)
    details = {}
    for table, frame in parsed.details.items():
        details[table] = f"{stem}.{table}.parquet"
        _of_accepted_parents(table, frame, accepted).write_parquet(details[table])
    return FileOutcome(**p.base, status="loaded", reason=None, rows_in=parsed.rows_in,
                       rows_accepted=accepted.height, rows_quarantined=quarantined.height,
                       accepted_parquet=str(accepted_path), quarantine_parquet=str(quarantine_path),
                       detail_parquets=details)
