"""Benchmark result files written by the tests: a large detailed vLLM run and bad inputs."""
import json
import random
from pathlib import Path


def detailed_vllm_result(n_requests: int, n_failed: int, seed: int = 7) -> dict:
    """A `--save-result --save-detailed` document whose scalars agree with its per-request lists."""
    rng = random.Random(seed)
    failed = set(rng.sample(range(n_requests), n_failed))
    input_lens, output_lens, ttfts, itls, latencies, errors = [], [], [], [], [], []
    for i in range(n_requests):
        input_lens.append(rng.randint(900, 1100))
        if i in failed:
            output_lens.append(0)
            ttfts.append(0.0)
            itls.append([])
            latencies.append(0.0)
            errors.append("Bad Request: prompt too long")
            continue
        out = rng.randint(4, 12)
        gaps = [round(rng.uniform(0.004, 0.009), 6) for _ in range(out - 1)]
        ttft = round(rng.uniform(0.05, 0.4), 6)
        output_lens.append(out)
        ttfts.append(ttft)
        itls.append(gaps)
        latencies.append(round(ttft + sum(gaps), 6))
        errors.append("")
    completed = n_requests - n_failed
    ok = [i for i in range(n_requests) if i not in failed]
    duration = 60.0
    total_out = sum(output_lens)
    total_in = sum(input_lens[i] for i in ok)  # the client counts successful requests only
    return {
        "date": "20260115-120000", "endpoint_type": "vllm", "backend": "vllm", "label": "detailed",
        "model_id": "amd/Llama-3.1-8B-Instruct", "tokenizer_id": "amd/Llama-3.1-8B-Instruct",
        "num_prompts": n_requests, "gpu_model": "MI300X", "gpu_count": "1", "request_rate": 50.0,
        "burstiness": 1.0, "max_concurrency": None, "duration": duration, "completed": completed,
        "failed": n_failed, "total_input_tokens": total_in, "total_output_tokens": total_out,
        "request_throughput": completed / duration, "request_goodput": None,
        "output_throughput": total_out / duration, "total_token_throughput": (total_in + total_out) / duration,
        "mean_ttft_ms": 1000 * sum(ttfts[i] for i in ok) / completed, "p99_ttft_ms": 390.0,
        "input_lens": input_lens, "output_lens": output_lens, "ttfts": ttfts, "itls": itls,
        "latencies": latencies, "errors": errors, "generated_texts": ["x"] * n_requests,
        "start_times": [i * 0.02 for i in range(n_requests)],
    }


def write_json(path: Path, doc) -> Path:
    """Write a document the way Python's json module does (NaN / Infinity literals included)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def small_vllm_result(**overrides) -> dict:
    """A minimal current-client result for one run on 8 GPUs, with fields replaced as given."""
    doc = {"backend": "vllm", "model_id": "meta-llama/Llama-3.1-8B-Instruct", "num_prompts": 100, "request_rate": "inf", "duration": 10.0,
           "completed": 100, "failed": 0, "total_input_tokens": 10000, "total_output_tokens": 20000,
           "request_throughput": 10.0, "output_throughput": 2000.0, "total_token_throughput": 3000.0,
           "mean_ttft_ms": 100.0, "p99_ttft_ms": 200.0}
    doc.update(overrides)
    return doc
