"""The staged-Parquet cache and the landing store cannot mix files up or publish tampered bytes (#23)."""
import datetime as dt
import uuid
from pathlib import Path

import polars as pl
import pytest
import yaml
from prefect import flow

from flows.ingest import stage_cache
from flows.ingest.land import land_file
from flows.ingest.sources import load_sources
from flows.ingest.stage import stage_file
from flows.stage_inputs import ingest
from provider_eval.paths import DATA_DIR, DEFAULT_SOURCES

NOW = "2026-11-30T00:00:00+00:00"
BUNDLED = yaml.safe_load(DEFAULT_SOURCES.read_text(encoding="utf-8"))
NAMES = [s["name"] for s in BUNDLED["sources"]]


@flow
def _ingest(sources_file: str, root: str) -> list:
    """The refresh's fetch → land → stage (cache included), without the SQL build."""
    build_dir = Path(root) / ".build" / uuid.uuid4().hex
    build_dir.mkdir(parents=True)
    outcomes, *_ = ingest(load_sources(Path(sources_file)), Path(root), build_dir, "w.duckdb", NOW)
    return outcomes


def _declare(config: Path, names: list[str]) -> Path:
    """The bundled sources.yaml with only these sources (its relative paths still resolve)."""
    body = {**BUNDLED, "sources": [s for s in BUNDLED["sources"] if s["name"] in names]}
    path = config / "sources.yaml"
    path.write_text(yaml.safe_dump(body, sort_keys=False), encoding="utf-8")
    return path


def _rows_by_source(outcomes) -> dict[str, list]:
    """Every staged row, by source, checked to belong to the outcome (file) that points at it."""
    out: dict[str, list] = {}
    for o in outcomes:
        for path in [o.accepted_parquet, o.quarantine_parquet, *o.detail_parquets.values()]:
            if path is None:
                continue
            frame = pl.read_parquet(path)
            if frame.height:
                assert set(frame["source_name"]) == {o.source_name}, (o.original_path, path)
                assert set(frame["file_sha256"]) == {o.file_sha256}, (o.original_path, path)
            out.setdefault(o.source_name, []).extend(sorted(map(repr, frame.rows())))
    return out


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    config = tmp_path_factory.mktemp("config")
    (config / "samples").symlink_to(DATA_DIR / "samples")
    root = tmp_path_factory.mktemp("wh")
    full = _rows_by_source(_ingest(str(_declare(config, NAMES)), str(root)))
    return config, root, full


# In turn, on one warehouse root (one landing store, one cache): each step drops one source and adds
# back the one the step before dropped, so each source is dropped once and added back once.
@pytest.mark.parametrize("dropped", NAMES)
def test_dropping_a_source_removes_exactly_its_rows_and_the_one_added_back_gets_them_again(world, dropped):
    config, root, full = world
    without = _rows_by_source(_ingest(str(_declare(config, [n for n in NAMES if n != dropped])), str(root)))
    assert dropped not in without
    assert without == {s: rows for s, rows in full.items() if s != dropped}


def test_adding_the_last_dropped_source_back_restores_every_row(world):
    config, root, full = world
    assert _rows_by_source(_ingest(str(_declare(config, NAMES)), str(root))) == full


def test_every_bundled_source_stages_rows(world):
    _, _, full = world
    assert set(full) == set(NAMES)


def _staged(tmp_path, name="a.csv", price="2.00"):
    path = tmp_path / name
    path.write_text("provider,offer_id,gpu_model,gpus_per_node,price,currency,price_unit,price_scope,"
                    f"billing_model,observed_at\nacme,o1,MI300X,8,{price},USD,hour,per_gpu,on_demand,"
                    "2026-11-01T00:00:00Z\n", encoding="utf-8")
    landed = land_file("s", path, tmp_path / "landing", dt.datetime.fromisoformat(NOW))
    return landed, stage_file(landed, "quote-csv", {}, tmp_path / f"staged-{uuid.uuid4().hex}")


def test_an_outcome_is_never_stored_under_another_files_key(tmp_path):
    a, outcome_a = _staged(tmp_path, "a.csv", "2.00")
    b, _ = _staged(tmp_path, "b.csv", "3.00")
    key_b = stage_cache.cache_key(b, "quote-csv", {}, "code")
    with pytest.raises(stage_cache.EntryMismatch):
        stage_cache.store(tmp_path / "cache", key_b, b.file_sha256, outcome_a)
    assert not (tmp_path / "cache" / key_b).exists()


def test_an_entry_recorded_for_another_file_is_refused_and_removed(tmp_path):
    a, outcome_a = _staged(tmp_path, "a.csv", "2.00")
    b, _ = _staged(tmp_path, "b.csv", "3.00")
    key = stage_cache.cache_key(a, "quote-csv", {}, "code")
    stage_cache.store(tmp_path / "cache", key, a.file_sha256, outcome_a)
    problems = []
    assert stage_cache.lookup(tmp_path / "cache", key, b.file_sha256, problems) is None
    assert "stored under a key of file" in problems[0] and not (tmp_path / "cache" / key).exists()


def test_a_tampered_staged_parquet_is_rejected_and_the_file_staged_again(tmp_path):
    a, outcome = _staged(tmp_path)
    key = stage_cache.cache_key(a, "quote-csv", {}, "code")
    stored = stage_cache.store(tmp_path / "cache", key, a.file_sha256, outcome)
    assert stage_cache.lookup(tmp_path / "cache", key, a.file_sha256) == stored
    # What `copy (...) to '<entry>/...parquet'` did: same schema, forged values.
    forged = pl.read_parquet(stored.accepted_parquet).with_columns(pl.lit("-1").alias("setup_fee"))
    forged.write_parquet(stored.accepted_parquet)
    problems = []
    assert stage_cache.lookup(tmp_path / "cache", key, a.file_sha256, problems) is None
    assert "sha256 mismatch" in problems[0]


def test_an_untouched_entry_is_used_without_reading_its_parquet_again(tmp_path, monkeypatch):
    """Its files still have the size, times and inode recorded when they were stored: not re-hashed
    (a refresh no longer reads the whole staged history to use it); the tamper above is still caught."""
    a, outcome = _staged(tmp_path)
    key = stage_cache.cache_key(a, "quote-csv", {}, "code")
    stored = stage_cache.store(tmp_path / "cache", key, a.file_sha256, outcome)
    read = []
    monkeypatch.setattr(stage_cache, "sha256_of", lambda path: read.append(path) or "")
    assert stage_cache.lookup(tmp_path / "cache", key, a.file_sha256) == stored
    assert read == []


def test_a_copied_cache_is_hashed_once_then_trusted_again(tmp_path, monkeypatch):
    """A cache copied or restored from a backup has new inodes and change times: its Parquet is read
    once, found unchanged and its new stamps recorded, so later refreshes do not read it all again."""
    import shutil

    a, outcome = _staged(tmp_path)
    key = stage_cache.cache_key(a, "quote-csv", {}, "code")
    stage_cache.store(tmp_path / "cache", key, a.file_sha256, outcome)
    shutil.copytree(tmp_path / "cache", tmp_path / "copied")
    monkeypatch.setattr(stage_cache, "SETTLED_NS", 0)  # the copies are older than that already
    real, read = stage_cache.sha256_of, []
    monkeypatch.setattr(stage_cache, "sha256_of", lambda path: read.append(path) or real(path))
    first = stage_cache.lookup(tmp_path / "copied", key, a.file_sha256)
    assert first is not None and len(read) == 2  # the accepted rows and the quarantine, hashed again
    read.clear()
    assert stage_cache.lookup(tmp_path / "copied", key, a.file_sha256) == first
    assert read == []
    # Trusting the new stamps does not trust new bytes: a rewrite changes them again and is caught.
    pl.read_parquet(first.accepted_parquet).with_columns(pl.lit("-1").alias("setup_fee")).write_parquet(
        first.accepted_parquet)
    problems = []
    assert stage_cache.lookup(tmp_path / "copied", key, a.file_sha256, problems) is None
    assert "sha256 mismatch" in problems[0]


def test_a_tampered_outcome_record_is_rejected(tmp_path):
    a, outcome = _staged(tmp_path)
    key = stage_cache.cache_key(a, "quote-csv", {}, "code")
    stage_cache.store(tmp_path / "cache", key, a.file_sha256, outcome)
    (tmp_path / "cache" / key / stage_cache.OUTCOME).write_text("offer_id,price\nx,1\n")
    problems = []
    assert stage_cache.lookup(tmp_path / "cache", key, a.file_sha256, problems) is None
    assert "unreadable outcome" in problems[0]


def test_a_changed_landed_file_is_restored_from_its_original_or_rejected(tmp_path):
    from flows.ingest.land import verify_landed

    landed, _ = _staged(tmp_path)
    Path(landed.landed_path).write_text("provider,offer_id\nforged,1\n")
    assert verify_landed(landed) is None  # the original still has the landed bytes: put back
    assert stage_file(landed, "quote-csv", {}, tmp_path / "again").rows_accepted == 1
    Path(landed.landed_path).write_text("provider,offer_id\nforged,1\n")
    Path(landed.original_path).unlink()
    assert "no longer has sha256" in verify_landed(landed)


def test_a_tampered_landing_store_is_rejected_never_staged(tmp_path):
    (tmp_path / "samples").mkdir()
    quote = tmp_path / "samples" / "q.csv"
    quote.write_bytes((DATA_DIR / "samples" / "quotes" / "seed_000_example.csv").read_bytes())
    sources = tmp_path / "sources.yaml"
    sources.write_text(yaml.safe_dump({"sources": [{"name": "q", "kind": "quotes", "format": "quote-csv",
                                                    "path": "samples/q.csv", "defaults": {"currency": "USD"}}]}))
    root = tmp_path / "wh"
    [first] = _ingest(str(sources), str(root))
    assert first.status == "loaded"
    # A later refresh finds no cache entry (pruned, new code) and the landed bytes changed.
    for entry in (root / "staged-cache").rglob("outcome.json"):
        entry.unlink()
    [landed] = [p for p in (root / "landing" / "q").iterdir() if p.suffix == ".csv"]
    landed.write_text(landed.read_text().replace("2.00", "0.02"))
    quote.write_text(quote.read_text() + "\n")  # the original moved on: nothing to restore from
    outcomes = {o.file_sha256: o for o in _ingest(str(sources), str(root))}
    assert outcomes[first.file_sha256].status == "rejected"
    assert outcomes[first.file_sha256].reason.startswith("LANDED_FILE_CHANGED")
    assert outcomes[first.file_sha256].accepted_parquet is None


PUBLISHED_BY_SOURCE = """
    select 'manifest', source_name, count(*), sum(rows_in) from ingest_manifest group by all
    union all select 'offer_history', source_name, count(*), null from offer_history group by all
    union all select 'benchmark_runs', source_name, count(*), null from benchmark_runs group by all
    union all select 'quarantine', source_name, count(*), null from quarantine group by all
    order by all"""


def test_published_tables_follow_the_declared_sources_through_the_shared_cache(world):
    """The same on the published warehouse: the cache the steps above filled serves a real refresh."""
    from tests.conftest import query, run_refresh

    config, root, _ = world
    warehouse = Path(root) / "w.duckdb"
    assert run_refresh(warehouse, _declare(config, NAMES)).is_completed()
    full = query(warehouse, PUBLISHED_BY_SOURCE)
    dropped = "inferencex-mi355x"  # its format sorts between others: batches interleave
    assert run_refresh(warehouse, _declare(config, [n for n in NAMES if n != dropped])).is_completed()
    assert query(warehouse, PUBLISHED_BY_SOURCE) == [r for r in full if r[1] != dropped]
    assert any(r[1] == dropped for r in full)
