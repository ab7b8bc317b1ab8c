"""Feasibility inside the refresh: memory_fit and compat_checks feed workload_costs, and agree with the CLI."""
import shutil

import pytest

from provider_eval import feasibility
from tests.conftest import FIXTURES, query, run_refresh, write_sources

HERE = FIXTURES / "feasibility"


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory):
    """Quotes with declared software images and a 70B serving workload, refreshed once."""
    tmp = tmp_path_factory.mktemp("feasibility")
    for name in ("quotes.csv", "runs.csv", "workloads.yaml"):
        shutil.copy(HERE / name, tmp / name)
    sources = write_sources(tmp, [
        {"name": "test-quotes", "kind": "quotes", "format": "quote-csv", "path": "quotes.csv"},
        {"name": "test-runs", "kind": "benchmarks", "format": "run-csv", "path": "runs.csv"},
    ])
    path = tmp / "warehouse.duckdb"
    state = run_refresh(path, sources=sources, workloads=tmp / "workloads.yaml")
    assert state.is_completed(), state.message
    return path


def costs(warehouse, workload_id):
    rows = query(warehouse, "select offer_id, status, exclusion_reasons, memory_fits, compat_verdict "
                            "from workload_costs where workload_id = ? order by offer_id", [workload_id])
    return {r[0]: r[1:] for r in rows}


def test_exclusion_reasons_come_from_the_feasibility_marts(warehouse):
    by_offer = costs(warehouse, "llama70b-serving")
    assert by_offer["mi300x-1"] == ("excluded", ["DOES_NOT_FIT"], False, "supported")
    assert by_offer["mi350x-8"] == ("excluded", ["ROCM_UNSUPPORTED"], True, "unsupported")
    assert by_offer["mi300x-8"] == ("ranked", [], True, "supported")
    # No declared image: unknown stays rankable, and visible.
    assert by_offer["mi325x-8"] == ("ranked", [], True, "unknown")
    ranked = query(warehouse, "select offer_id from rankings where workload_id = 'llama70b-serving' order by rank")
    assert {r[0] for r in ranked} == {"mi300x-8", "mi325x-8"}


def test_workload_without_a_model_is_not_memory_checked(warehouse):
    assert query(warehouse, "select count(*) from memory_fit where workload_id = 'batch-job'") == [(0,)]
    by_offer = costs(warehouse, "batch-job")
    assert by_offer["mi300x-1"][0] == "ranked" and by_offer["mi300x-1"][2] is None


def test_memory_fit_covers_every_gpu_model_and_count(warehouse):
    rows = query(warehouse, "select gpu_model, gpu_count, fits, min_gpus, required_bytes_per_gpu, "
                            "weights_bytes_per_gpu + kv_cache_bytes_per_gpu + activation_bytes_per_gpu "
                            "+ optimizer_bytes_per_gpu + reserve_bytes_per_gpu "
                            "from memory_fit where workload_id = 'llama70b-serving'")
    by_config = {(r[0], r[1]): r[2:] for r in rows}
    gpus = {r[0] for r in query(warehouse, "select gpu_model from ref.gpus")}
    assert {(g, n) for g in gpus for n in (1, 2, 4, 8)} <= set(by_config)
    assert by_config[("MI300X", 1)][:2] == (False, 2)
    assert all(required == parts for _, _, required, parts in by_config.values() if required is not None)


def test_cli_and_warehouse_agree_on_memory_fit(warehouse):
    [row] = query(warehouse, "select required_bytes_per_gpu, verdict, min_gpus, reasons from memory_fit "
                             "where workload_id = 'llama70b-serving' and gpu_model = 'MI300X' and gpu_count = 1")
    cli = feasibility.check_fit({"model_id": "llama-3.1-70b", "precision": "bf16", "context_tokens": 8192,
                                 "concurrency": 16, "mode": "inference", "engine": "vllm",
                                 "gpu_model": "MI300X", "gpu_count": 1})
    assert (cli["required_bytes_per_gpu"], cli["verdict"], cli["min_gpus"], cli["reasons"]) == row


def test_cli_and_warehouse_agree_on_compat(warehouse):
    rows = query(warehouse, "select gpu_model, rocm_version, os, kernel, amdgpu_driver_version, torch_version, engine, "
                            "verdict, reasons from compat_checks")
    assert rows
    requests = [dict(zip(feasibility.COMPAT_COLUMNS, r[:7])) for r in rows]
    for row, cli in zip(rows, feasibility.check_compat_many(requests)):
        assert (cli["verdict"], cli["reasons"]) == row[7:]


def test_seed_000_needs_no_memory_fit(sample_warehouse):
    assert query(sample_warehouse, "select count(*) from memory_fit where workload_id = 'seed-000-same-task'") == [(0,)]
