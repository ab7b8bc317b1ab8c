"""Staging many files: batches per format, one contract check per batch, staged Parquet reused across refreshes."""
import hashlib
from pathlib import Path

import polars as pl
import pytest

import flows.ingest.stage as stage_module
from flows.ingest import stage_cache, stage_pool
from flows.ingest.land import LandedFile
from flows.ingest.stage import stage_file
from flows.ingest.validate import validate_frame, validate_frames
from flows.stage_inputs import MAX_BYTES_PER_BATCH, MAX_FILES_PER_BATCH, batches
from models import CONTRACTS
from tests.conftest import left_as_found, query, run_refresh, write_sources

HEADER = "provider,offer_id,gpu_model,gpus_per_node,price,currency,price_unit,price_scope,billing_model,observed_at\n"


def _quote_file(path: Path, offers: int, price: str = "2.00") -> Path:
    lines = [f"acme,o{i},MI300X,8,{price},USD,hour,per_gpu,on_demand,2026-11-01T00:00:00Z\n" for i in range(offers)]
    path.write_text(HEADER + "".join(lines), encoding="utf-8")
    return path


def _accepted(tmp_path: Path, name: str, offers: int) -> pl.DataFrame:
    path = _quote_file(tmp_path / name, offers)
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    landed = LandedFile("s", sha, str(path), str(path), "2026-11-29T00:00:00+00:00")
    outcome = stage_file(landed, "quote-csv", {}, tmp_path / "staged")
    frame = pl.read_parquet(outcome.accepted_parquet)
    assert frame.height == offers
    return frame


def test_batched_contract_check_quarantines_exactly_what_one_file_at_a_time_does(tmp_path):
    contract = CONTRACTS["quote_observations"]
    good = _accepted(tmp_path, "a.csv", 3)
    broken = _accepted(tmp_path, "b.csv", 4).with_columns(
        pl.when(pl.col("row_number") == 2).then(pl.lit("usd")).otherwise(pl.col("currency")).alias("currency"))
    together = validate_frames([good, broken], contract)
    apart = [validate_frame(good, contract), validate_frame(broken, contract)]
    for (ok_t, bad_t), (ok_a, bad_a) in zip(together, apart):
        assert ok_t.equals(ok_a) and bad_t.equals(bad_a)
    assert together[0][1].height == 0 and together[1][1]["row_number"].to_list() == [2]
    # The usual case: every row passes, one check for all the frames.
    assert [(ok.height, bad.height) for ok, bad in validate_frames([good, good], contract)] == [(3, 0), (3, 0)]


def test_batches_keep_one_format_each_and_bound_their_size():
    items = [(f"q{i}", "quote-csv", {}) for i in range(300)] + [(f"r{i}", "vllm-serve", {}) for i in range(5)]
    groups = batches(items, workers=2)
    assert all(len({fmt for _, fmt, _ in g}) == 1 for g in groups)
    assert max(len(g) for g in groups) == MAX_FILES_PER_BATCH
    assert [x for g in groups for x in g] == items  # every file once, in order
    assert len([g for g in groups if g[0][1] == "vllm-serve"]) >= 2  # few files still spread over both workers


def test_batches_bound_their_bytes():
    """A batch's files live at once in one worker: bytes bound it too (a file over the bound goes alone)."""
    mib = 2**20
    sizes = {"a": 8 * mib, "b": 8 * mib, "c": 8 * mib, "huge": 3 * MAX_BYTES_PER_BATCH, "d": 1 * mib, "e": 1 * mib}
    items = [(name, "quote-csv", {}) for name in sizes]
    groups = batches(items, workers=1, size_of=lambda item: sizes[item[0]])
    assert [[name for name, _, _ in g] for g in groups] == [["a", "b"], ["c"], ["huge"], ["d", "e"]]
    assert all(sum(sizes[n] for n, _, _ in g) <= MAX_BYTES_PER_BATCH for g in groups if len(g) > 1)


@pytest.fixture(scope="module")
def cached_warehouse(tmp_path_factory):
    """Two quote files refreshed once; the staged Parquet is cached beside the warehouse."""
    root = tmp_path_factory.mktemp("cache")
    (root / "quotes").mkdir()
    _quote_file(root / "quotes" / "a.csv", 3)
    _quote_file(root / "quotes" / "b.csv", 2, price="3.00")
    sources = write_sources(root, [{"name": "q", "kind": "quotes", "format": "quote-csv", "path": "quotes/*.csv"}])
    warehouse = root / "wh" / "provider_eval.duckdb"
    assert run_refresh(warehouse, sources=sources).is_completed()
    return root, sources, warehouse


SNAPSHOT = "select offer_id, usd_per_gpu_hour, source_name from offer_history order by all"


def test_a_refresh_stages_only_files_it_has_not_staged_before(cached_warehouse, monkeypatch):
    root, sources, warehouse = cached_warehouse
    with left_as_found(root):  # c.csv and its refresh stay out of the module's other tests
        before = query(warehouse, SNAPSHOT)
        manifest = query(warehouse, "select file_sha256, status, rows_in, rows_accepted from ingest_manifest order by 1")
        parsed = []
        real = stage_module.parse_files
        monkeypatch.setattr(stage_module, "parse_files",
                            lambda batch: parsed.extend(lf.original_path for lf, *_ in batch) or real(batch))
        assert run_refresh(warehouse, sources=sources).is_completed()
        assert parsed == [] and query(warehouse, SNAPSHOT) == before
        assert query(warehouse, "select file_sha256, status, rows_in, rows_accepted from ingest_manifest order by 1") == manifest
        _quote_file(root / "quotes" / "c.csv", 1, price="4.00")
        assert run_refresh(warehouse, sources=sources).is_completed()
        assert [Path(p).name for p in parsed] == ["c.csv"]
        assert len(query(warehouse, SNAPSHOT)) == len(before) + 1
        assert len(list((warehouse.parent / "staged-cache" / warehouse.name).iterdir())) == 3


def test_changed_staging_code_or_reference_data_restages_everything(cached_warehouse, monkeypatch):
    root, sources, warehouse = cached_warehouse
    before = query(warehouse, SNAPSHOT)
    old_entries = {p.name for p in (warehouse.parent / "staged-cache" / warehouse.name).iterdir()}
    monkeypatch.setattr(stage_cache, "code_fingerprint", lambda: "new adapter version")
    assert run_refresh(warehouse, sources=sources).is_completed()
    entries = {p.name for p in (warehouse.parent / "staged-cache" / warehouse.name).iterdir()}
    assert entries and not entries & old_entries  # re-staged, and the stale entries pruned
    assert query(warehouse, SNAPSHOT) == before


DIGEST_SQL = "\nunion all ".join(
    f"select '{table}', count(*), md5(coalesce(string_agg({row}, ',' order by {row}), '')) from {table}"
    for table, row in [
        ("offers", "concat_ws('|', offer_id, billing_model, usd_per_gpu_hour, currency, price_scope, source_name)"),
        ("quarantine", "concat_ws('|', file_sha256, row_number, reason_code, detail, raw_record)"),
        ("benchmark_runs", "concat_ws('|', run_id, gpu_model, gpu_count, units_per_hour)"),
        ("benchmark_requests", "concat_ws('|', run_id, request_index, ttft_ms, latency_ms)"),
        ("rankings", "concat_ws('|', workload_id, rank, offer_id, total_cost_usd)"),
        ("ingest_manifest", "concat_ws('|', file_sha256, status, rows_in, rows_accepted, rows_quarantined)"),
    ])


def test_staging_in_worker_processes_gives_the_same_tables(tmp_path, monkeypatch, sample_warehouse):
    """The process pool big refreshes use stages exactly what threads stage (bundled samples, forced on)."""
    from concurrent.futures import ProcessPoolExecutor

    submitted = []
    real_submit = ProcessPoolExecutor.submit
    monkeypatch.setattr(ProcessPoolExecutor, "submit",
                        lambda self, fn, *a, **k: submitted.append(fn.__name__) or real_submit(self, fn, *a, **k))
    monkeypatch.setenv(stage_pool.ENV, "1")
    warehouse = tmp_path / "wh" / "provider_eval.duckdb"
    assert run_refresh(warehouse).is_completed()
    assert submitted and set(submitted) == {"stage_files"}
    assert query(warehouse, DIGEST_SQL) == query(sample_warehouse, DIGEST_SQL)


def test_worker_processes_only_for_big_refreshes(monkeypatch):
    monkeypatch.delenv(stage_pool.ENV, raising=False)
    monkeypatch.setattr(stage_pool.os, "cpu_count", lambda: 2)
    assert not stage_pool.wanted(10 * 2**20) and stage_pool.wanted(stage_pool.AUTO_MIN_BYTES)
    monkeypatch.setenv(stage_pool.ENV, "0")
    assert not stage_pool.wanted(10 * 2**30)
    monkeypatch.setenv(stage_pool.ENV, "1")
    assert stage_pool.wanted(0)
