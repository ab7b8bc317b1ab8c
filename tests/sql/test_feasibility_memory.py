"""Known-answer tests for the memory-fit SQL (int_memory_fit.sql), run the way check-fit runs it."""
import csv
import shutil

import pytest

from provider_eval import feasibility
from provider_eval.paths import REFERENCE_DIR

GB = 1e9


def fit(**request):
    request.setdefault("mode", "inference")
    return feasibility.check_fit(request)


@pytest.fixture(scope="module")
def seed_reference(tmp_path_factory):
    """The shipped reference data plus seed 000's hypothetical dense models (test-only rows)."""
    ref = tmp_path_factory.mktemp("reference")
    for path in REFERENCE_DIR.glob("*.csv"):
        shutil.copy(path, ref / path.name)
    with (REFERENCE_DIR / "llm_models.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    base = next(r for r in rows if r["model_id"] == "llama-3.1-70b")
    with (ref / "llm_models.csv").open("a", newline="") as f:
        writer = csv.DictWriter(f, list(base), lineterminator="\n")
        for model_id, params in [("seed-100b", 100_000_000_000), ("seed-140b", 140_000_000_000),
                                 ("seed-70b", 70_000_000_000), ("amd-blog-520b", 520_000_000_000)]:
            writer.writerow({**base, "model_id": model_id, "params_total": params, "params_active": params,
                             "source": "test-only hypothetical model (seed 000 / AMD blog worked example)"})
    return ref


def test_llama_3_1_70b_bf16_weights_are_141_1_gb():
    result = fit(model_id="llama-3.1-70b", precision="bf16", gpu_model="MI300X", gpu_count=1,
                 context_tokens=1024, concurrency=1)
    assert result["weights_bytes_per_gpu"] == 70_553_706_496 * 2
    assert round(result["weights_bytes_per_gpu"] / GB, 1) == 141.1


@pytest.mark.parametrize("model_id, kv_bytes", [("llama-3.1-70b", 327_680), ("deepseek-v3", 70_272),
                                                ("llama-3.1-8b", 131_072), ("llama-3.1-405b", 516_096),
                                                ("gpt-oss-120b", 36_864)])
def test_kv_bytes_per_token_bf16(model_id, kv_bytes):
    result = fit(model_id=model_id, precision="bf16", gpu_model="MI300X", gpu_count=8, context_tokens=1024)
    assert result["kv_bytes_per_token"] == kv_bytes


def test_llama_70b_128k_context_kv_is_40_gib_per_sequence():
    result = fit(model_id="llama-3.1-70b", precision="bf16", gpu_model="MI300X", gpu_count=1,
                 context_tokens=131_072, concurrency=1)
    assert result["kv_cache_bytes_per_gpu"] == 40 * 2**30
    fp8 = fit(model_id="llama-3.1-70b", precision="bf16", kv_precision="fp8", gpu_model="MI300X", gpu_count=1,
              context_tokens=131_072, concurrency=1)
    assert fp8["kv_cache_bytes_per_gpu"] == 20 * 2**30


def test_mla_latent_is_replicated_and_gqa_heads_replicate_past_kv_heads():
    ds = [fit(model_id="deepseek-r1", precision="fp8", gpu_model="MI300X", gpu_count=n, context_tokens=8192)
          for n in (1, 8)]
    assert ds[0]["kv_cache_bytes_per_gpu"] == ds[1]["kv_cache_bytes_per_gpu"]
    llama = {n: fit(model_id="llama-3.1-70b", precision="bf16", gpu_model="MI300X", gpu_count=n, context_tokens=8192)
             for n in (2, 8, 16)}
    assert llama[2]["kv_cache_bytes_per_gpu"] == 4 * llama[8]["kv_cache_bytes_per_gpu"]
    # 8 KV heads over 16 GPUs: each GPU still holds one whole head.
    assert llama[16]["kv_cache_bytes_per_gpu"] == llama[8]["kv_cache_bytes_per_gpu"]


def test_sliding_window_layers_are_capped():
    short = fit(model_id="gpt-oss-120b", precision="fp4", gpu_model="MI355X", gpu_count=1, context_tokens=131_072)
    # 18 full layers x 2 x 8 heads x 64 x 2 B per token, plus 18 sliding layers capped near the window.
    full_only = 36_864 * 131_072
    assert full_only < short["kv_cache_bytes_per_gpu"] < full_only * 1.1


def test_llama_405b_fp8_fits_8_mi300x():
    result = fit(model_id="llama-3.1-405b", precision="fp8", gpu_model="MI300X", gpu_count=8,
                 context_tokens=8192, concurrency=16)
    assert result["fits"] is True and result["verdict"] == "fits"
    assert round(result["weights_bytes_per_gpu"] / GB, 1) == 50.7
    assert result["min_gpus"] <= 8


def test_deepseek_r1_fp8_runs_at_tp8_on_mi300x():
    result = fit(model_id="deepseek-r1", precision="fp8", gpu_model="MI300X", gpu_count=8, context_tokens=8192,
                 concurrency=16)
    assert result["verdict"] == "fits"


def test_gpt_oss_120b_runs_at_tp1_on_mi355x():
    assert fit(model_id="gpt-oss-120b", precision="fp4", gpu_model="MI355X", gpu_count=1,
               context_tokens=8192, concurrency=8)["verdict"] == "fits"


def test_seed_000_100b_16bit_exceeds_mi300x_fits_mi325x(seed_reference):
    on = {gpu: feasibility.check_fit(dict(model_id="seed-100b", precision="bf16", gpu_model=gpu, gpu_count=1,
                                          context_tokens=16, concurrency=1, mode="inference"),
                                     reference_dir=seed_reference)
          for gpu in ("MI300X", "MI325X")}
    assert round(on["MI300X"]["weights_bytes_per_gpu"] / GB) == 200
    assert on["MI300X"]["verdict"] == "does_not_fit" and on["MI300X"]["min_gpus"] == 2
    assert on["MI325X"]["verdict"] == "fits" and on["MI325X"]["min_gpus"] == 1


def test_seed_000_140b_16bit_leaves_almost_no_headroom_on_mi350x(seed_reference):
    result = feasibility.check_fit(dict(model_id="seed-140b", precision="bf16", gpu_model="MI350X", gpu_count=1,
                                        context_tokens=16, concurrency=1, mode="inference"),
                                   reference_dir=seed_reference)
    weights_share = result["weights_bytes_per_gpu"] / result["available_bytes_per_gpu"]
    # 280 GB of weights in the "288 GB" of HBM3E, which is 288 GiB = 309.2 GB (measured on the MI355X's same memory).
    assert 0.90 < weights_share < 0.91
    assert result["verdict"] == "does_not_fit"  # once the engine's reserve is counted
    assert result["min_gpus"] == 2


def test_seed_000_70b_16bit_on_mi300x_depends_on_context(seed_reference):
    def on_mi300x(context, concurrency):
        return feasibility.check_fit(dict(model_id="seed-70b", precision="bf16", gpu_model="MI300X", gpu_count=1,
                                          context_tokens=context, concurrency=concurrency, mode="inference"),
                                     reference_dir=seed_reference)["verdict"]
    assert on_mi300x(8192, 4) == "fits"
    assert on_mi300x(131_072, 4) == "does_not_fit"


def test_mxfp4_block_scales_520b_is_276_gb(seed_reference):
    result = feasibility.check_fit(dict(model_id="amd-blog-520b", precision="mxfp4", gpu_model="MI355X", gpu_count=1,
                                        context_tokens=16, mode="inference"), reference_dir=seed_reference)
    assert round(result["weights_bytes_per_gpu"] / GB) == 276


@pytest.mark.parametrize("precision, gpu, supported", [
    ("fp4", "MI300X", False), ("fp6", "MI325X", False), ("fp4", "MI355X", True), ("fp8", "MI300X", True),
    ("fp8", "RX 7900 XTX", False), ("fp8", "Radeon AI PRO R9700", True), ("int4", "RX 7900 XTX", True),
])
def test_precision_is_gated_by_hardware(precision, gpu, supported):
    result = fit(model_id="llama-3.1-8b", precision=precision, gpu_model=gpu, gpu_count=1, context_tokens=1024)
    assert result["precision_supported"] is supported
    if not supported:
        assert result["verdict"] == "precision_unsupported"
        assert any(f"no native {precision.upper()}" in r for r in result["reasons"])


def test_full_fine_tune_uses_16_bytes_per_param_adamw():
    result = fit(model_id="llama-3.1-8b", precision="bf16", gpu_model="MI300X", gpu_count=1, context_tokens=2048,
                 mode="training")
    states = result["weights_bytes_per_gpu"] + result["optimizer_bytes_per_gpu"]
    assert states == 8_030_261_248 * 16
    assert round(states / GB, 1) == 128.5
    sharded = fit(model_id="llama-3.1-8b", precision="bf16", gpu_model="MI300X", gpu_count=8, context_tokens=2048,
                  mode="training")
    assert sharded["optimizer_bytes_per_gpu"] == pytest.approx(result["optimizer_bytes_per_gpu"] / 8, abs=1)


def test_lora_and_qlora_need_far_less_than_full_fine_tune():
    full = fit(model_id="llama-3.1-70b", precision="bf16", gpu_model="MI300X", gpu_count=1, context_tokens=2048,
               mode="training")
    lora = fit(model_id="llama-3.1-70b", precision="bf16", gpu_model="MI300X", gpu_count=1, context_tokens=2048,
               mode="lora")
    qlora = fit(model_id="llama-3.1-70b", precision="nf4", gpu_model="MI300X", gpu_count=1, context_tokens=2048,
                mode="qlora")
    assert full["verdict"] == "does_not_fit" and full["min_gpus"] >= 8
    assert lora["optimizer_bytes_per_gpu"] < full["optimizer_bytes_per_gpu"] / 100
    assert qlora["weights_bytes_per_gpu"] < lora["weights_bytes_per_gpu"] / 3
    assert qlora["verdict"] == "fits"


def test_sglang_memory_fraction_on_mi300x_tp8_is_0_862():
    result = fit(model_id="deepseek-v3", precision="fp8", gpu_model="MI300X", gpu_count=8, engine="sglang",
                 context_tokens=4096)
    assert result["gpu_memory_fraction"] == pytest.approx(0.862)


def test_memory_in_bytes_mi300x_is_196592_mib():
    result = fit(model_id="llama-3.1-8b", precision="bf16", gpu_model="MI300X", gpu_count=1, context_tokens=1024)
    assert result["available_bytes_per_gpu"] == 196_592 * 2**20
    assert result["memory_basis"] == "measured" and result["memory_source"].startswith("amd-smi: 196592 MiB")


def test_unknown_model_is_unknown_not_a_fit():
    result = fit(model_id="no-such-model", precision="bf16", gpu_model="MI300X", gpu_count=1)
    assert result["verdict"] == "unknown" and result["fits"] is None
    assert any("not in the LLM catalog" in r for r in result["reasons"])


def test_tensor_parallel_needs_heads_to_split():
    result = fit(model_id="llama-3.1-8b", precision="bf16", gpu_model="MI300X", gpu_count=3, context_tokens=1024)
    assert result["fits"] is False
    assert any("do not split evenly over 3 GPUs" in r for r in result["reasons"])


def test_vllm_budget_llama_70b_tp2_on_mi300x_is_about_700k_tokens():
    # Reference notes §4: per-GPU KV per token 163,840 B; ≈ 700k tokens of KV at gpu_memory_utilization 0.90.
    def at(sequences):
        return fit(model_id="llama-3.1-70b", precision="bf16", gpu_model="MI300X", gpu_count=2,
                   context_tokens=8192, concurrency=sequences, engine="vllm")
    fits, too_many = at(80), at(88)
    assert fits["kv_cache_bytes_per_gpu"] == 80 * 8192 * 163_840
    assert fits["verdict"] == "fits" and too_many["verdict"] == "does_not_fit"


def test_invariants_over_a_grid_of_requests_in_one_vectorised_run():
    models = feasibility.load_catalog().model_ids
    requests = [dict(model_id=m, precision=p, gpu_model=g, gpu_count=n, context_tokens=c, concurrency=k, mode=mode)
                for m in models for p in ("bf16", "fp8", "fp4", "int4") for g in ("MI300X", "MI355X", "RX 7900 XTX")
                for n in (1, 2, 8) for c in (2048, 32768) for k in (1, 8)
                for mode in ("inference", "training", "lora")]
    results = feasibility.check_fit_many(requests)
    by_request = {tuple(sorted(r.items())): res for r, res in zip(requests, results)}

    def get(**changes):
        return by_request[tuple(sorted({**req, **changes}.items()))]

    for req, res in zip(requests, results):
        parts = (res["weights_bytes_per_gpu"] + res["kv_cache_bytes_per_gpu"] + res["activation_bytes_per_gpu"]
                 + res["optimizer_bytes_per_gpu"] + res["reserve_bytes_per_gpu"])
        assert res["required_bytes_per_gpu"] == parts
        assert res["headroom_bytes_per_gpu"] == res["available_bytes_per_gpu"] - parts
        assert res["verdict"] in ("fits", "does_not_fit", "precision_unsupported")
        assert all(v >= 0 for v in (res["weights_bytes_per_gpu"], res["kv_cache_bytes_per_gpu"],
                                    res["activation_bytes_per_gpu"], res["optimizer_bytes_per_gpu"]))
        if res["fits"] and res["precision_supported"]:
            assert res["min_gpus"] is not None and res["min_gpus"] <= req["gpu_count"]
        if req["concurrency"] == 1:
            more = get(concurrency=8)
            assert more["required_bytes_per_gpu"] >= res["required_bytes_per_gpu"]
            assert not (more["fits"] and not res["fits"])
        if req["gpu_count"] == 1:
            assert get(gpu_count=8)["weights_bytes_per_gpu"] <= res["weights_bytes_per_gpu"]
        if req["mode"] != "inference":
            assert res["kv_cache_bytes_per_gpu"] == 0
