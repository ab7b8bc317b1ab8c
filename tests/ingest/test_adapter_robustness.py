"""Inputs that used to crash a refresh or lose rows (issue 23), each built the way it was found.

Every case goes through the real landing and staging path: a wrong-typed value becomes a quarantined
row naming file, row and field; a file no adapter can read is rejected with a reason; nothing raises.
"""
import copy
import dataclasses
import json
from pathlib import Path

import polars as pl
import pytest

from flows.ingest import stage as stage_module
from flows.ingest.adapters import ADAPTERS
from flows.ingest.land import land_file
from flows.ingest.stage import stage_files
from provider_eval.paths import DATA_DIR
from tests.conftest import FIXTURES
from tests.ingest.test_quote_bad_inputs import NOW, stage

CATALOGS = DATA_DIR / "samples" / "quotes" / "catalogs"
BENCH = FIXTURES / "benchmarks"
MLPERF = BENCH / "mlperf_v4.1" / "closed" / "AMD"
MLPERF_SUMMARY = (MLPERF / "results" / "8xMI300X_2xEPYC-9374F" / "llama2-70b-99" / "Offline" / "performance"
                  / "run_1" / "mlperf_log_summary.txt")
SYSTEM_JSON = MLPERF / "systems" / "8xMI300X_2xEPYC-9374F.json"


def staged(tmp_path: Path, name: str, text: str, fmt: str, defaults: dict | None = None):
    """Write, land and stage one file; it must load with rows conserved. Returns (accepted, quarantined)."""
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    out, accepted, quarantined = stage(path, tmp_path / "work", defaults or {"provider": "p"}, fmt=fmt)
    assert out.status == "loaded", out.reason
    assert out.rows_in == accepted.height + quarantined.height
    return accepted, quarantined


def mutate(doc, key: str, fn):
    """A deep copy of a catalog document with fn applied to every record under key that has a GPU."""
    doc = copy.deepcopy(doc)
    for item in (doc[key] if key else doc):
        fn(item)
    return json.dumps(doc)


DO = json.loads((CATALOGS / "digitalocean_v2_sizes.json").read_text())
GPU_SIZES = [s for s in DO["sizes"] if isinstance(s.get("gpu_info"), dict)]


@pytest.mark.parametrize("value, code", [("eight", "GPU_COUNT_INVALID"), ([8], "FIELD_TYPE_INVALID"),
                                         ({"n": 8}, "FIELD_TYPE_INVALID"), (2**40, "GPU_COUNT_INVALID")])
def test_digitalocean_gpu_count_of_another_type_is_quarantined(tmp_path, value, code):
    text = mutate(DO, "sizes", lambda s: s.get("gpu_info") and s["gpu_info"].__setitem__("count", value))
    accepted, q = staged(tmp_path, "sizes.json", text, "digitalocean-sizes")
    assert accepted.height == 0
    # Hourly and monthly of every GPU size name the count (an unknown GPU name may be named first).
    mine = q.filter(pl.col("detail").str.contains(f"{code}: .*gpus_per_node"))
    assert mine.height == 2 * len(GPU_SIZES) and code in set(q["reason_code"])
    assert set(q["source_file"]) == {"sizes.json"}


def test_digitalocean_numeric_regions_are_joined_as_written(tmp_path):
    text = mutate(DO, "sizes", lambda s: s.__setitem__("regions", [1, 2]))
    accepted, _ = staged(tmp_path, "sizes.json", text, "digitalocean-sizes")
    assert set(accepted["region"]) == {"1,2"}


def test_vultr_vram_not_a_number_is_named_per_plan(tmp_path):
    doc = json.loads((CATALOGS / "vultr_v2_plans.json").read_text())
    text = mutate(doc, "plans", lambda p: p.__setitem__("gpu_vram_gb", "N/A"))
    _, q = staged(tmp_path, "plans.json", text, "vultr-plans")
    bad = q.filter(pl.col("reason_code") == "VRAM_NOT_NUMERIC")
    assert bad.height > 0
    assert all("gpu_vram_gb 'N/A'" in d and d.startswith("VRAM_NOT_NUMERIC: row ") for d in bad["detail"])


def test_hotaisle_cpus_as_a_list_still_loads_the_offer(tmp_path):
    doc = json.loads((CATALOGS / "hotaisle_available_vms.json").read_text())
    before, _ = staged(tmp_path, "vms.json", json.dumps(doc), "hotaisle-available")
    text = mutate(doc, None, lambda vm: vm["Specs"].__setitem__("cpus", [{"model": "EPYC"}]))
    accepted, _ = staged(tmp_path, "vms2.json", text, "hotaisle-available")
    assert accepted.height == before.height > 0


def test_a_catalog_record_the_adapter_cannot_read_is_one_quarantined_row(tmp_path):
    # Specs.gpus as a number: the record is that row's problem (named), the other records load.
    doc = json.loads((CATALOGS / "hotaisle_available_vms.json").read_text())
    doc = [copy.deepcopy(doc[0]), *doc]
    doc[0]["Specs"]["gpus"] = [{"model": ["MI300X"], "count": 8}]  # an unhashable model name
    accepted, q = staged(tmp_path, "vms.json", json.dumps(doc), "hotaisle-available")
    assert q.filter(pl.col("row_number") == 1)["reason_code"].to_list() == ["FIELD_TYPE_INVALID"]
    assert accepted.height == len(doc) - 1


def test_counts_over_32_bits_are_quarantined_in_quote_csv_and_run_csv(tmp_path):
    big = str(2**31 + 5)
    quote = "provider,offer_id,gpu_model,gpus_per_node,price,currency,price_unit,price_scope,billing_model\n" \
            f"p,a,MI300X,{big},2.00,USD,hour,per_node,on_demand\np,b,MI300X,8,16.00,USD,hour,per_node,on_demand\n"
    accepted, q = staged(tmp_path, "q.csv", quote, "quote-csv")
    assert accepted["offer_id"].to_list() == ["b"] and q["reason_code"].to_list() == ["GPU_COUNT_INVALID"]
    assert big in q["detail"][0] and "gpus_per_node" in q["detail"][0]
    runs = "run_id,gpu_model,gpu_count,unit,completed,duration_s\n" \
           f"r1,MI300X,{big},jobs,1,3600\nr2,MI300X,8,jobs,1,3600\n"
    accepted, q = staged(tmp_path, "r.csv", runs, "run-csv")
    assert accepted["run_id"].to_list() == ["r2"] and q["reason_code"].to_list() == ["GPU_COUNT_INVALID"]


def test_mlperf_system_json_with_a_huge_gpu_count_is_quarantined(tmp_path):
    system = json.loads(SYSTEM_JSON.read_text())
    system["accelerators_per_node"] = 2**33
    root = tmp_path / "closed" / "AMD"
    summary = root / MLPERF_SUMMARY.relative_to(MLPERF)
    summary.parent.mkdir(parents=True)
    summary.write_bytes(MLPERF_SUMMARY.read_bytes())
    (root / "systems").mkdir()
    (root / "systems" / SYSTEM_JSON.name).write_text(json.dumps(system))
    landed = land_file("fixture", summary, tmp_path / "landing", NOW,
                       companions=ADAPTERS["mlperf-summary"].companions(summary))
    out = stage_files([(landed, "mlperf-summary", {"model_id": "llama-2-70b"})], tmp_path / "staged")[0]
    assert out.status == "loaded", out.reason
    q = pl.read_parquet(out.quarantine_parquet)
    assert (out.rows_accepted, q["reason_code"].to_list()) == (0, ["GPU_COUNT_INVALID"])
    assert str(2**33) in q["detail"][0]


def test_vllm_json_integer_of_401_digits_is_a_quarantined_row(tmp_path):
    doc = json.loads((BENCH / "vllm_serve_current_mi300x.json").read_text())
    doc["completed"] = int("9" * 401)
    _, q = staged(tmp_path, "r.json", json.dumps(doc), "vllm-serve", {"gpu_model": "MI300X", "gpu_count": 8})
    assert q["reason_code"].to_list() == ["METRIC_OUT_OF_RANGE"]
    assert "completed" in q["detail"][0] and "401 digits" in q["detail"][0]


def test_vllm_json_integer_past_pythons_digit_limit_rejects_the_file_by_name(tmp_path):
    doc = json.loads((BENCH / "vllm_serve_current_mi300x.json").read_text())
    doc["num_prompts"] = 12345
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc).replace("12345", "9" * 5000))
    out, _, _ = stage(path, tmp_path / "work", {"gpu_model": "MI300X", "gpu_count": 8}, fmt="vllm-serve")
    assert out.status == "rejected" and out.reason.startswith("JSON_MALFORMED: a number has too many digits")


# --- parsers that lost or invented rows ------------------------------------------------------

def test_vllm_log_block_cut_off_by_the_next_header_is_quarantined_and_the_next_parses(tmp_path):
    log = (BENCH / "vllm_serve_sweep_mi325x.log").read_text().split("\n")
    header = [n for n, line in enumerate(log) if "Serving Benchmark Result" in line]
    first_end = next(n for n in range(header[0] + 1, len(log)) if set(log[n].strip()) == {"="})
    # The first client was killed after its TTFT lines; the second run's log follows.
    cut = log[:header[0] + 12] + log[first_end + 1:header[1] + 1] + log[header[1] + 1:]
    accepted, q = staged(tmp_path, "sweep.log", "\n".join(cut), "vllm-serve-log",
                         {"gpu_model": "MI325X", "gpu_count": 8})
    assert q.filter(pl.col("row_number") == header[0] + 1)["reason_code"].to_list() == ["TRUNCATED"]
    assert "starts the next block" in q.filter(pl.col("row_number") == header[0] + 1)["detail"][0]
    second = accepted.filter(pl.col("completed") == 640)
    # The second run keeps its own preamble (concurrency 64), not swallowed by the cut block.
    assert second.height == 1 and second["max_concurrency"][0] == 64
    assert accepted.height + q.height == len(header)


def test_sglang_line_with_a_unicode_line_separator_in_a_string_is_one_run(tmp_path):
    lines = (BENCH / "sglang_serving_mi355x.jsonl").read_text().split("\n")
    for sep in ("\u2028", "\u2029", "\u0085", "\x0c", "\x1e"):
        first = json.loads(lines[0])
        first["tag"] = f"c16{sep}retry"
        text = json.dumps(first, ensure_ascii=False) + "\n" + lines[2] + "\n"
        accepted, q = staged(tmp_path, f"s{ord(sep)}.jsonl", text, "sglang-serving",
                             {"gpu_model": "MI355X", "gpu_count": 8})
        assert (accepted.height, q.height) == (2, 0), (repr(sep), q.to_dicts())


# --- the error boundary ---------------------------------------------------------------------

def _land(tmp_path: Path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return land_file("fixture", path, tmp_path / "landing", NOW)


GOOD_QUOTE = ("provider,offer_id,gpu_model,gpus_per_node,price,currency,price_unit,price_scope,billing_model\n"
              "p,a,MI300X,8,16.00,USD,hour,per_node,on_demand\n")


def test_an_adapter_that_raises_rejects_only_its_file(tmp_path, monkeypatch):
    def broken(ctx):
        raise KeyError("gpu_info")

    monkeypatch.setitem(ADAPTERS, "run-csv", dataclasses.replace(ADAPTERS["run-csv"], parse=broken))
    runs = _land(tmp_path, "runs.csv", "run_id,gpu_count,unit,completed,duration_s\nr,8,jobs,1,60\n")
    quotes = _land(tmp_path, "q.csv", GOOD_QUOTE)
    bad, good = stage_files([(runs, "run-csv", {}), (quotes, "quote-csv", {})], tmp_path / "staged")
    assert bad.status == "rejected" and bad.rows_in == 0
    assert bad.reason == "ADAPTER_ERROR: runs.csv: the run-csv adapter failed with KeyError: 'gpu_info'"
    assert good.status == "loaded" and good.rows_accepted == 1


def test_a_parse_many_that_raises_falls_back_to_each_file(tmp_path, monkeypatch):
    def broken(ctxs):
        raise RuntimeError("batch")

    monkeypatch.setitem(ADAPTERS, "quote-csv", dataclasses.replace(ADAPTERS["quote-csv"], parse_many=broken))
    files = [_land(tmp_path, f"q{i}.csv", GOOD_QUOTE.replace(",a,", f",a{i},")) for i in range(2)]
    outs = stage_files([(f, "quote-csv", {}) for f in files], tmp_path / "staged")
    assert [o.status for o in outs] == ["loaded", "loaded"]


def test_a_contract_check_that_raises_rejects_only_its_file(tmp_path, monkeypatch):
    real = stage_module.validate_frame

    def picky(frame, contract):
        if frame.height and frame["offer_id"][0] == "boom":
            raise ValueError("frame does not match its contract")
        return real(frame, contract)

    def no_batch(frames, contract):
        raise ValueError("one frame does not stack")

    monkeypatch.setattr(stage_module, "validate_frames", no_batch)
    monkeypatch.setattr(stage_module, "validate_frame", picky)
    bad = _land(tmp_path, "bad.csv", GOOD_QUOTE.replace(",a,", ",boom,"))
    good = _land(tmp_path, "good.csv", GOOD_QUOTE)
    outs = stage_files([(bad, "quote-csv", {}), (good, "quote-csv", {})], tmp_path / "staged")
    assert outs[0].status == "rejected"
    assert outs[0].reason.startswith("CONTRACT_ERROR: bad.csv: the quote_observations contract check failed")
    assert outs[1].status == "loaded" and outs[1].rows_accepted == 1


def test_rows_not_conserved_rejects_the_file_instead_of_raising(tmp_path, monkeypatch):
    real = ADAPTERS["run-csv"].parse

    def loses_a_row(ctx):
        result = real(ctx)
        result.rows_in += 1
        return result

    monkeypatch.setitem(ADAPTERS, "run-csv", dataclasses.replace(ADAPTERS["run-csv"], parse=loses_a_row))
    runs = _land(tmp_path, "runs.csv", "run_id,gpu_model,gpu_count,unit,completed,duration_s\nr,MI300X,8,jobs,1,60\n")
    out = stage_files([(runs, "run-csv", {})], tmp_path / "staged")[0]
    assert out.status == "rejected" and out.reason.startswith("ROWS_NOT_CONSERVED: runs.csv: 2 rows in")


class _DyingPool:
    """A process pool whose worker dies on a file named poison.csv (then the pool is broken, as
    ProcessPoolExecutor's is after a worker is killed)."""

    def __init__(self):
        self.broken = False

    def submit(self, fn, batch, staging_dir):
        from concurrent.futures import Future
        from concurrent.futures.process import BrokenProcessPool
        if self.broken:
            raise BrokenProcessPool("a child process terminated abruptly")
        future = Future()
        if any(landed.original_path.endswith("poison.csv") for landed, _, _ in batch):
            self.broken = True
            future.set_exception(BrokenProcessPool("a child process terminated abruptly"))
        else:
            future.set_result(fn(batch, staging_dir))
        return future

    def shutdown(self, wait=True, cancel_futures=False):
        pass


def test_a_worker_that_dies_rejects_only_the_file_it_died_on(tmp_path, monkeypatch):
    from flows.ingest import stage_pool
    files = [_land(tmp_path, name, GOOD_QUOTE.replace(",a,", f",{name[:-4]},"))
             for name in ("one.csv", "poison.csv", "two.csv")]
    with stage_pool.processes(True, 1, new_executor=lambda workers: _DyingPool()):
        outs = stage_pool.stage_files([(f, "quote-csv", {}) for f in files], tmp_path / "staged")
    assert [o.status for o in outs] == ["loaded", "rejected", "loaded"]
    assert outs[1].reason.startswith("WORKER_ERROR: poison.csv: the worker process staging it failed with "
                                     "BrokenProcessPool")


def test_a_staging_pool_belongs_to_the_block_that_opened_it(tmp_path):
    """Only stage_files calls in the opening context (and copies of it, as Prefect's task threads
    get) use the pool; another thread's do not, and after the block none do: it is shut down."""
    import contextvars
    import threading
    from flows.ingest import stage_pool

    used, shut = [], []

    class Recording(_DyingPool):
        def submit(self, fn, batch, staging_dir):
            used.append(threading.current_thread().name)
            return super().submit(fn, batch, staging_dir)

        def shutdown(self, wait=True, cancel_futures=False):
            shut.append(wait)

    quote = _land(tmp_path, "one.csv", GOOD_QUOTE)
    batch = [(quote, "quote-csv", {})]

    def stage_in(name, context=None):
        run = (lambda: context.run(stage_pool.stage_files, batch, tmp_path / name)) if context else \
            (lambda: stage_pool.stage_files(batch, tmp_path / name))
        thread = threading.Thread(target=run, name=name)
        thread.start()
        thread.join()

    with stage_pool.processes(True, 1, new_executor=lambda workers: Recording()):
        stage_in("task-thread", contextvars.copy_context())
        stage_in("other-thread")
        assert shut == []
    assert used == ["task-thread"] and shut == [True]
    assert stage_pool.stage_files(batch, tmp_path / "after")[0].status == "loaded" and used == ["task-thread"]
