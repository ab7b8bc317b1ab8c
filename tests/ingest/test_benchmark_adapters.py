"""Each benchmark format's adapter on real-shaped fixtures: known values, units, and bad inputs."""
import json
import math
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flows.ingest.adapters import ADAPTERS
from flows.ingest.adapters.base import FileRejected
from flows.ingest.validate import validate_frame
from models import CONTRACTS
from tests.adapter_context import file_context
from tests.benchmark_files import detailed_vllm_result, small_vllm_result, write_json
from tests.conftest import FIXTURES

BENCH = FIXTURES / "benchmarks"
MLPERF = BENCH / "mlperf_v4.1" / "closed" / "AMD"
MLPERF_RUN = MLPERF / "results" / "8xMI300X_2xEPYC-9374F" / "llama2-70b-99" / "{}" / "performance" / "run_1" / "mlperf_log_summary.txt"
SYSTEM_JSON = MLPERF / "systems" / "8xMI300X_2xEPYC-9374F.json"


def parse(fmt: str, path: Path, defaults: dict | None = None, companions: dict | None = None):
    """Run a format's adapter the way stage.py does; the accepted rows must satisfy the contract."""
    ctx = file_context(path, defaults, companions)
    result = ADAPTERS[fmt].parse(ctx)
    accepted, rejects = validate_frame(result.accepted, CONTRACTS[ADAPTERS[fmt].table])
    assert rejects.height == 0, rejects
    assert accepted.height + result.quarantined.height == result.rows_in
    for table, frame in result.details.items():
        CONTRACTS[table].validate(frame, lazy=True)
    return result


def one(result) -> dict:
    assert result.accepted.height == 1, result.quarantined
    return result.accepted.row(0, named=True)


def codes(result) -> list[str]:
    return sorted(result.quarantined["reason_code"].to_list())


# --- vllm-serve -------------------------------------------------------------------------------

def test_vllm_serve_legacy_real_file_keys():
    run = one(parse("vllm-serve", BENCH / "vllm_serve_result_llama3.3-70b_tp8_A100_scalars.json",
                    {"gpu_model": "MI300X", "gpu_count": 8}))
    assert run["completed"] == 200 and run["attempted"] == 200
    assert run["failed"] == 0  # legacy files have no `failed`: num_prompts − completed
    assert run["request_goodput_per_s"] is None  # read from the legacy "request_goodput:" key
    assert run["request_rate_raw"] == "inf" and run["request_rate_per_s"] is None
    assert run["output_tokens_per_s"] == pytest.approx(1780.3566341089636)
    assert run["ttft_p99_ms"] == pytest.approx(450.3786364301777)
    assert run["engine"] == "vllm" and run["model_id"] == "llama-3.3-70b"  # the HF repo id, resolved


def test_vllm_serve_legacy_goodput_key_is_read(tmp_path):
    doc = small_vllm_result(**{"request_goodput:": 7.5})
    run = one(parse("vllm-serve", write_json(tmp_path / "r.json", doc), {"gpu_model": "MI300X", "gpu_count": 8}))
    assert run["request_goodput_per_s"] == 7.5


def test_vllm_serve_current_keys_metadata_and_dynamic_percentiles():
    result = parse("vllm-serve", BENCH / "vllm_serve_current_mi300x.json")
    run = one(result)
    assert (run["gpu_model"], run["gpu_count"], run["provider"], run["precision"]) == ("MI300X", 8, "example-cloud", "fp8")
    assert (run["engine"], run["engine_version"], run["rocm_version"]) == ("vllm", "0.9.1", "6.4.1")
    assert run["completed"] == 638 and run["failed"] == 2 and run["max_concurrency"] == 64
    assert run["label"] == "mi300x-tp8-c64"
    assert run["ttft_p90_ms"] == 300.0 and run["e2el_p99_ms"] == 6400.0
    stats = json.loads(run["latency_stats_ms_json"])
    assert stats["p99.9_ttft"] == 700.0 and stats["p99.9_e2el"] == 6800.0
    assert json.loads(run["metadata_json"])["metadata.provider"] == "example-cloud"
    assert "benchmark_requests" not in result.details  # no --save-detailed lists


def test_vllm_serve_pytorch_sibling_is_not_this_format():
    ignores = ADAPTERS["vllm-serve"].ignores
    assert ignores(BENCH / "vllm_serve_current_mi300x.pytorch.json")
    assert not ignores(BENCH / "vllm_serve_current_mi300x.json")


def test_vllm_serve_detailed_thousands_of_requests(tmp_path):
    doc = detailed_vllm_result(n_requests=3000, n_failed=25)
    result = parse("vllm-serve", write_json(tmp_path / "detailed.json", doc))
    run = one(result)
    requests = result.details["benchmark_requests"]
    assert requests.height == 3000 == run["request_rows"]
    assert requests["run_id"].unique().to_list() == [run["run_id"]]
    assert requests.filter(~pl.col("succeeded")).height == 25 == run["failed"]
    assert requests["output_tokens"].sum() == doc["total_output_tokens"]
    ok = requests.filter("succeeded")
    # seconds in the file → ms in the table, and the run's mean TTFT is the mean of its requests'
    assert ok["ttft_ms"].mean() == pytest.approx(run["ttft_mean_ms"])
    first = requests.row(0, named=True)
    assert first["latency_ms"] == pytest.approx(doc["latencies"][0] * 1000)
    assert first["itl_count"] == len(doc["itls"][0])
    assert first["tpot_ms"] == pytest.approx((doc["latencies"][0] - doc["ttfts"][0]) * 1000 / (doc["output_lens"][0] - 1))


def test_vllm_serve_detail_with_bad_values_quarantines_the_run(tmp_path):
    doc = detailed_vllm_result(n_requests=50, n_failed=0)
    doc["ttfts"][10] = float("nan")
    result = parse("vllm-serve", write_json(tmp_path / "bad.json", doc))
    assert result.accepted.height == 0 and codes(result) == ["REQUEST_DETAIL_INVALID"]
    assert "benchmark_requests" not in result.details
    doc = detailed_vllm_result(n_requests=50, n_failed=0)
    doc["latencies"][3] = doc["ttfts"][3] / 2  # finished before its first token: negative TPOT
    result = parse("vllm-serve", write_json(tmp_path / "tpot.json", doc))
    assert codes(result) == ["REQUEST_DETAIL_INVALID"]
    doc = detailed_vllm_result(n_requests=50, n_failed=0)
    doc["itls"] = doc["itls"][:-1]
    result = parse("vllm-serve", write_json(tmp_path / "short.json", doc))
    assert codes(result) == ["REQUEST_DETAIL_INVALID"]


@pytest.mark.parametrize("field, value, code", [
    ("output_throughput", float("nan"), "METRIC_NONFINITE"),
    ("output_throughput", float("inf"), "METRIC_NONFINITE"),
    ("total_token_throughput", float("-inf"), "METRIC_NONFINITE"),
    ("output_throughput", -5.0, "METRIC_OUT_OF_RANGE"),
    ("output_throughput", 0.0, "METRIC_OUT_OF_RANGE"),
    ("duration", -10.0, "METRIC_OUT_OF_RANGE"),
    ("duration", 0.0, "DURATION_INVALID"),
    ("completed", 150, "METRIC_INCONSISTENT"),
    ("completed", "lots", "METRIC_NOT_NUMERIC"),
])
def test_vllm_serve_numeric_specials_are_quarantined(tmp_path, field, value, code):
    doc = small_vllm_result(**{field: value})
    result = parse("vllm-serve", write_json(tmp_path / "r.json", doc), {"gpu_model": "MI300X", "gpu_count": 8})
    assert result.accepted.height == 0
    assert result.quarantined["reason_code"][0] == code
    assert result.quarantined["detail"][0]
    assert json.loads(result.quarantined["raw_record"][0])["model_id"] == "meta-llama/Llama-3.1-8B-Instruct"  # raw record kept


def test_vllm_serve_all_failed_run_is_kept_for_reliability(tmp_path):
    doc = small_vllm_result(completed=0, failed=100, output_throughput=0.0, total_token_throughput=0.0,
                            request_throughput=0.0)
    run = one(parse("vllm-serve", write_json(tmp_path / "r.json", doc), {"gpu_model": "MI300X", "gpu_count": 8}))
    assert run["completed"] == 0 and run["failed"] == 100


def test_vllm_serve_metadata_precedence_and_conflicts(tmp_path):
    # --metadata fills what the file lacks; defaults fill the rest.
    doc = small_vllm_result(gpu_model="AMD Instinct MI325X")
    run = one(parse("vllm-serve", write_json(tmp_path / "a.json", doc), {"gpu_count": 8, "provider": "p"}))
    assert (run["gpu_model"], run["gpu_count"], run["provider"]) == ("MI325X", 8, "p")
    # The same GPU spelled differently is not a conflict …
    one(parse("vllm-serve", write_json(tmp_path / "b.json", doc), {"gpu_model": "MI325X", "gpu_count": 8}))
    # … a different one is, and is never silently overridden.
    result = parse("vllm-serve", write_json(tmp_path / "c.json", doc), {"gpu_model": "MI300X", "gpu_count": 8})
    assert codes(result) == ["DEFAULT_CONFLICT"]
    assert "MI325X" in result.quarantined["detail"][0] and "MI300X" in result.quarantined["detail"][0]
    # A file field and its own --metadata disagreeing (backend vllm, --metadata engine=sglang).
    doc = small_vllm_result(engine="sglang")
    result = parse("vllm-serve", write_json(tmp_path / "d.json", doc), {"gpu_model": "MI300X", "gpu_count": 8})
    assert codes(result) == ["METADATA_CONFLICT"]


def test_node_count_from_metadata_defaults_and_mlperf_system_json(tmp_path):
    doc = small_vllm_result(gpu_model="MI300X", node_count=2)  # vllm bench serve --metadata node_count=2
    assert one(parse("vllm-serve", write_json(tmp_path / "a.json", doc), {"gpu_count": 16}))["node_count"] == 2
    unstated = small_vllm_result(gpu_model="MI300X")
    assert one(parse("vllm-serve", write_json(tmp_path / "b.json", unstated), {"gpu_count": 8}))["node_count"] is None
    assert one(parse("vllm-serve", write_json(tmp_path / "c.json", unstated),
                     {"gpu_count": 16, "node_count": 2}))["node_count"] == 2
    for bad, detail in [("two", "is not a positive whole number"), (0, "is not a positive whole number"),
                        (9, "more than the run's 8 GPUs")]:
        result = parse("vllm-serve", write_json(tmp_path / f"bad-{bad}.json", small_vllm_result(
            gpu_model="MI300X", node_count=bad)), {"gpu_count": 8})
        assert codes(result) == ["NODE_COUNT_INVALID"] and detail in result.quarantined["detail"][0]
    assert one(_mlperf("Offline", {"model_id": "llama-2-70b"}))["node_count"] == 1  # system JSON number_of_nodes
    # Without the system JSON the node count is unknown, not assumed to be 1.
    assert one(_mlperf("Offline", {"gpu_model": "MI300X", "gpu_count": 8}, companions={}))["node_count"] is None


def test_vllm_serve_unknown_gpu_is_quarantined_not_guessed(tmp_path):
    result = parse("vllm-serve", write_json(tmp_path / "a.json", small_vllm_result()), {"gpu_count": 8})
    assert codes(result) == ["FIELD_MISSING"]
    doc = small_vllm_result(gpu_model="MI3OOX")  # letter O
    result = parse("vllm-serve", write_json(tmp_path / "b.json", doc), {"gpu_count": 8})
    assert codes(result) == ["GPU_ALIAS_UNKNOWN"]
    # A bare family name could be several variants (different memory and bandwidth): not guessed either.
    result = parse("vllm-serve", write_json(tmp_path / "c.json", small_vllm_result(gpu_model="H100")), {"gpu_count": 8})
    assert codes(result) == ["GPU_VARIANT_UNKNOWN"] and "H100 SXM" in result.quarantined["detail"][0]


@pytest.mark.parametrize("text, code", [
    ('{"completed": 10, "duration": 5.0, "ttfts": [0.1, 0.2', "TRUNCATED"),
    ('{"completed": 10, "duration": 5.0, "model_id": "abc', "TRUNCATED"),
    ('{"completed": 10, "completed": 11, "duration": 5.0}', "SCHEMA_DRIFT"),
    ('[{"completed": 10, "duration": 5.0}]', "SCHEMA_DRIFT"),
    ('{"elapsed_time": 1.0}', "SCHEMA_DRIFT"),
    ('{"completed": 10, "duration": 5.0', "TRUNCATED"),
    ('{"completed": 10, duration: 5.0}', "JSON_MALFORMED"),
    ("", "EMPTY"),
])
def test_vllm_serve_whole_file_problems(tmp_path, text, code):
    path = tmp_path / "r.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(FileRejected) as exc:
        parse("vllm-serve", path)
    assert exc.value.reason_code == code


# --- vllm-serve-log ---------------------------------------------------------------------------

def test_vllm_serve_log_sweep_many_runs_and_a_cut_block():
    result = parse("vllm-serve-log", BENCH / "vllm_serve_sweep_mi325x.log", {"gpu_model": "MI325X", "gpu_count": 8})
    assert result.rows_in == 3 and result.accepted.height == 2
    assert codes(result) == ["TRUNCATED"]
    first, second = result.accepted.sort("row_number").iter_rows(named=True)
    assert first["max_concurrency"] == 16 and first["completed"] == 160 and first["failed"] is None
    assert first["output_tokens_per_s"] == 4000.0 and first["ttft_p99_ms"] == 180.75
    assert second["max_concurrency"] == 64 and second["failed"] == 0
    assert second["e2el_p90_ms"] == 5900.0 and second["output_tokens_per_s"] == 12000.0
    assert first["run_id"] != second["run_id"]


# --- vllm-throughput --------------------------------------------------------------------------

def test_vllm_throughput_counts_prompt_and_output_tokens():
    run = one(parse("vllm-throughput", BENCH / "vllm_throughput_mi300x.json", {"gpu_model": "MI300X", "gpu_count": 8}))
    assert run["total_tokens_per_s"] == pytest.approx(2048000 / 120.0)
    assert run["output_tokens_per_s"] is None  # never passed off as an output rate
    assert run["completed"] == 1000 and run["duration_s"] == 120.0


# --- sglang-serving ---------------------------------------------------------------------------

def test_sglang_bad_middle_line_keeps_the_lines_after_it():
    result = parse("sglang-serving", BENCH / "sglang_serving_mi355x.jsonl", {"gpu_model": "MI355X", "gpu_count": 8})
    assert result.rows_in == 3 and result.accepted.height == 2
    assert result.quarantined["row_number"].to_list() == [2]
    assert codes(result) == ["JSON_MALFORMED"]
    first, third = result.accepted.sort("row_number").iter_rows(named=True)
    assert third["row_number"] == 3
    assert first["request_rate_raw"] == "inf" and first["achieved_concurrency"] == 15.8
    assert first["e2el_p99_ms"] == 8300.0 and first["total_tokens_per_s"] == 4096.0
    assert (first["model_id"], first["engine"], first["engine_version"]) == ("deepseek-r1", "sglang", "0.5.2")
    assert first["input_len_tokens"] == 1024 and first["failed"] is None  # no num_prompts: unknown
    assert third["total_tokens_per_s"] == pytest.approx(6553.6 * 2)  # older client: input + output


# --- mlperf-summary ---------------------------------------------------------------------------

def _mlperf(scenario: str, defaults=None, companions=None):
    companions = {str(SYSTEM_JSON): str(SYSTEM_JSON)} if companions is None else companions
    return parse("mlperf-summary", Path(str(MLPERF_RUN).format(scenario)), defaults, companions)


def test_mlperf_offline_and_server_known_values():
    offline = one(_mlperf("Offline", {"model_id": "llama-2-70b"}))
    server = one(_mlperf("Server", {"model_id": "llama-2-70b"}))
    assert offline["output_tokens_per_s"] == 23514.8 and offline["scenario"] == "Offline"
    assert server["output_tokens_per_s"] == 21028.23 and server["request_throughput_per_s"] == 71.74
    assert server["ttft_p99_ms"] == pytest.approx(1604.171041)  # ns → ms
    assert server["tpot_p99_ms"] == pytest.approx(197.873909)
    assert offline["e2el_p99_ms"] == pytest.approx(919869.139234)
    for run in (offline, server):
        assert (run["gpu_model"], run["gpu_count"]) == ("MI300X", 8)
        assert (run["engine"], run["engine_version"], run["rocm_version"]) == ("vllm", "0.4.3+rocm614", "6.1.2")
        assert run["result_valid"] is True and run["label"] == "llama2-70b-99"
        assert run["completed"] is None and run["duration_s"] is None  # the summary states rates only


def test_mlperf_system_json_conflicting_with_defaults_is_quarantined():
    result = _mlperf("Offline", {"gpu_model": "MI325X"})
    assert codes(result) == ["DEFAULT_CONFLICT"]


def test_mlperf_without_system_json_needs_defaults():
    assert codes(_mlperf("Server", {}, companions={})) == ["FIELD_MISSING"]
    run = one(_mlperf("Server", {"gpu_model": "MI300X", "gpu_count": 8}, companions={}))
    assert run["engine"] is None


def test_mlperf_companion_found_by_layout():
    summary = Path(str(MLPERF_RUN).format("Server"))
    assert ADAPTERS["mlperf-summary"].companions(summary) == [SYSTEM_JSON]


# --- inferencex-agg ---------------------------------------------------------------------------

def test_inferencex_real_object_per_gpu_and_seconds(tmp_path):
    real = BENCH / "inferencex_mi355x_glm5.1_fp4_sglang_tp2_conc16.json"
    # GLM-5.1 is not in the LLM catalog: the run is quarantined with its reason, never silently unmatched.
    unknown = parse("inferencex-agg", real)
    assert codes(unknown) == ["MODEL_UNKNOWN"] and "amd/GLM-5.1-MXFP4" in unknown.quarantined["detail"][0]
    # The same document with a catalog model (its units are what this test reads).
    doc = json.loads(real.read_text())
    doc["model"] = "amd/DeepSeek-R1-MXFP4"
    run = one(parse("inferencex-agg", write_json(tmp_path / real.name, doc)))
    assert run["model_id"] == "deepseek-r1"
    assert (run["gpu_model"], run["gpu_count"], run["precision"], run["engine"]) == ("MI355X", 2, "fp4", "sglang")
    assert run["output_tokens_per_s"] == pytest.approx(2 * 19.622831077955908)
    assert run["ttft_mean_ms"] == pytest.approx(183963.19790064368)  # s → ms
    assert run["completed"] == 87 and run["failed"] == 0 and run["max_concurrency"] == 16


def test_inferencex_array_worked_example_and_unknown_gpu():
    result = parse("inferencex-agg", BENCH / "inferencex_agg_bmk.json")
    run = one(result)
    assert run["output_tokens_per_s"] == pytest.approx(12000.0)
    assert run["total_tokens_per_s"] == pytest.approx(15000.5)
    assert run["ttft_median_ms"] == pytest.approx(150.5)
    assert run["failed"] == 2 and run["input_len_tokens"] == 1024
    assert codes(result) == ["GPU_ALIAS_UNKNOWN"]


def test_output_tokens_per_gpu_agree_across_formats():
    """The same run (8×MI300X, 12000 output tok/s) read from three formats gives one per-GPU rate."""
    vllm = one(parse("vllm-serve", BENCH / "vllm_serve_current_mi300x.json"))
    log = parse("vllm-serve-log", BENCH / "vllm_serve_sweep_mi325x.log", {"gpu_model": "MI300X", "gpu_count": 8})
    log_run = log.accepted.filter(pl.col("max_concurrency") == 64).row(0, named=True)
    infx = one(parse("inferencex-agg", BENCH / "inferencex_agg_bmk.json"))
    per_gpu = {r["benchmark_format"]: r["output_tokens_per_s"] / r["gpu_count"] for r in (vllm, log_run, infx)}
    assert all(math.isclose(v, 1500.0) for v in per_gpu.values()), per_gpu
    assert vllm["ttft_p99_ms"] == log_run["ttft_p99_ms"] == pytest.approx(infx["ttft_p99_ms"])


def test_sglang_output_details_become_requests(tmp_path):
    doc = {"backend": "sglang", "dataset_name": "random", "num_prompts": 3, "duration": 2.0, "completed": 2,
           "request_throughput": 1.0, "output_throughput": 5.0, "total_output_tokens": 10,
           "input_lens": [10, 11, 12], "output_lens": [4, 6, 0], "ttfts": [0.1, 0.2, 0.0],
           "itls": [[0.01, 0.02, 0.03], [0.01] * 5, []], "errors": ["", "", "timeout"]}
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps(doc) + "\n", encoding="utf-8")
    result = parse("sglang-serving", path, {"gpu_model": "MI355X", "gpu_count": 8})
    run = one(result)
    requests = result.details["benchmark_requests"].sort("request_index")
    assert run["failed"] == 1 and run["request_rows"] == 3
    assert requests["succeeded"].to_list() == [True, True, False]
    assert requests["ttft_ms"].to_list() == pytest.approx([100.0, 200.0, 0.0])
    assert requests["itl_max_ms"][0] == pytest.approx(30.0) and requests["itl_count"].to_list() == [3, 5, 0]
    assert requests["error"].to_list() == [None, None, "timeout"]


finite = st.floats(min_value=1e-3, max_value=1e6, allow_nan=False, allow_infinity=False)


# Throughput per GPU stays below the physical ceiling (IMPLAUSIBLE_VALUE, docs/quarantine.md): for
# Llama-3.1-8B on MI300X that is ~326k tokens/s per GPU, and the total here is twice the output rate.
plausible_per_gpu = st.floats(min_value=1e-3, max_value=1e5, allow_nan=False, allow_infinity=False)


@settings(max_examples=40, deadline=None)
@given(per_gpu=plausible_per_gpu, tp=st.sampled_from([1, 2, 4, 8]), pp=st.sampled_from([1, 2]), ttft_s=finite)
def test_inferencex_per_gpu_and_seconds_convert_once(tmp_path_factory, per_gpu, tp, pp, ttft_s):
    doc = {"hw": "mi300x", "tp": tp, "pp": pp, "model": "meta-llama/Llama-3.1-8B-Instruct", "framework": "vllm", "precision": "fp8",
           "num_requests_total": 10, "num_requests_successful": 10,
           "tput_per_gpu": per_gpu * 2, "output_tput_per_gpu": per_gpu, "p99_ttft": ttft_s}
    path = write_json(tmp_path_factory.mktemp("ix") / "a.json", doc)
    run = one(parse("inferencex-agg", path))
    assert run["gpu_count"] == tp * pp
    assert run["output_tokens_per_s"] / run["gpu_count"] == pytest.approx(per_gpu)
    assert run["total_tokens_per_s"] == pytest.approx(per_gpu * 2 * tp * pp)
    assert run["ttft_p99_ms"] == pytest.approx(ttft_s * 1000)


@settings(max_examples=40, deadline=None)
@given(ns=st.integers(min_value=1, max_value=10**13), pct=st.sampled_from(["50.00", "90.00", "99.00", "99.90"]))
def test_mlperf_ns_latency_lines_convert_to_ms(tmp_path_factory, ns, pct):
    text = (f"Scenario : Server\nCompleted tokens per second: 100.5\nResult is : VALID\n"
            f"{pct} percentile first token latency (ns)   : {ns}\n")
    path = tmp_path_factory.mktemp("ml") / "mlperf_log_summary.txt"
    path.write_text(text, encoding="utf-8")
    run = one(parse("mlperf-summary", path, {"gpu_model": "MI300X", "gpu_count": 8}))
    stats = json.loads(run["latency_stats_ms_json"])
    label = {"50.00": "median", "90.00": "p90", "99.00": "p99", "99.90": "p99.9"}[pct]
    assert stats[f"{label}_ttft"] == pytest.approx(ns / 1e6)
    if label != "p99.9":
        assert run[f"ttft_{label}_ms"] == pytest.approx(ns / 1e6)


def test_vllm_serve_append_result_file_holds_one_run_per_line(tmp_path):
    lines = [json.dumps(small_vllm_result(max_concurrency=c, output_throughput=100.0 * c)) for c in (8, 16, 32)]
    lines[1] = lines[1][:40]  # a damaged middle line
    path = tmp_path / "appended.json"
    path.write_text("\n".join(lines), encoding="utf-8")  # how --append-result separates results
    result = parse("vllm-serve", path, {"gpu_model": "MI300X", "gpu_count": 8})
    assert result.rows_in == 3 and codes(result) == ["JSON_MALFORMED"]
    assert sorted(result.accepted["max_concurrency"].to_list()) == [8, 32]
    assert result.accepted["run_id"].n_unique() == 2


def test_vllm_serve_object_with_trailing_garbage_is_quarantined(tmp_path):
    path = tmp_path / "r.json"
    path.write_text(json.dumps(small_vllm_result()) + "TRAILER", encoding="utf-8")
    result = parse("vllm-serve", path, {"gpu_model": "MI300X", "gpu_count": 8})
    assert result.rows_in == 1 and codes(result) == ["JSON_MALFORMED"]
