"""Write synthetic but realistic benchmark inputs: quote-csv observations, run-csv rows, workloads, sources."""
import csv
import datetime as dt
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl
import yaml

from provider_eval.paths import REFERENCE_DIR


@dataclass(frozen=True)
class Scale:
    """How much to generate: observations across offers, benchmark runs, per-request rows, workloads."""

    name: str
    observations: int
    offers: int
    runs: int
    workloads: int
    requests: int = 0
    requests_per_file: int = 10_000  # one `vllm bench serve --num-prompts N --save-detailed` run per file


SCALES = {
    "tiny": Scale("tiny", 4_000, 400, 2_000, 20, 4_000, 1_000),
    "small": Scale("small", 200_000, 5_000, 40_000, 200, 200_000),
    "default": Scale("default", 10_000_000, 5_000, 400_000, 200, 10_000_000),
    "large": Scale("large", 30_000_000, 5_000, 1_000_000, 200, 30_000_000),
}

PROVIDERS = ["hotaisle", "runpod", "tensorwave", "digitalocean", "vultr", "crusoe", "oracle", "azure",
             "amd-developer-cloud", "lambda-like", "neocloud-a", "neocloud-b"]
BILLING = ["on_demand", "spot", "reserved"]
GPU_COUNTS = [1, 2, 4, 8]
# Software images an offer declares (ROCm release, OS, kernel), picked from the compat reference.
IMAGES = [("6.4.1", "Ubuntu 24.04.2", "6.8"), ("7.0.2", "Ubuntu 24.04.3", "6.8"),
          ("6.3.3", "Ubuntu 22.04.5", "6.8"), ("7.1.0", "Ubuntu 24.04.3", "6.14"), (None, None, None)]
ENGINES = ["vllm", "sglang", None]
PRECISIONS = ["bf16", "fp8", "bf16", "int4"]
# Share of quote rows written deliberately wrong (must be quarantined, never lost).
BAD_ROW_SHARE = 0.002
QUOTE_INTERVAL_MIN = 15  # a catalog scrape every 15 minutes


def amd_aliases() -> dict[str, str]:
    """Every alias in data/reference/gpu_aliases.csv whose catalog gpu_model is an AMD GPU."""
    with open(REFERENCE_DIR / "gpus.csv", newline="", encoding="utf-8") as fh:
        amd = {r["gpu_model"] for r in csv.DictReader(fh) if r["vendor"] == "AMD"}
    with open(REFERENCE_DIR / "gpu_aliases.csv", newline="", encoding="utf-8") as fh:
        return {r["alias"]: r["gpu_model"] for r in csv.DictReader(fh) if r["gpu_model"] in amd}


def _llm_model_ids() -> list[str]:
    with open(REFERENCE_DIR / "llm_models.csv", newline="", encoding="utf-8") as fh:
        return [r["model_id"] for r in csv.DictReader(fh)]


def offer_catalog(scale: Scale, rng: np.random.Generator) -> pl.DataFrame:
    """The offers: provider, id, GPU (as an alias), count, billing, base price per GPU-hour, image."""
    aliases = amd_aliases()
    names = sorted(aliases)
    n = scale.offers
    alias = [names[i] for i in rng.integers(0, len(names), n)]
    image = [IMAGES[i] for i in rng.integers(0, len(IMAGES), n)]
    return pl.DataFrame({
        "provider": [PROVIDERS[i] for i in rng.integers(0, len(PROVIDERS), n)],
        "offer_id": [f"bench-offer-{i:05d}" for i in range(n)],
        "gpu_model": alias,
        "canonical_gpu": [aliases[a] for a in alias],
        "gpus_per_node": rng.choice(GPU_COUNTS, n),
        "billing_model": [BILLING[i] for i in rng.integers(0, len(BILLING), n)],
        # 1-5 USD per GPU-hour: inside every public price band in data/reference/price_bands.csv.
        "base_usd_per_gpu_hour": np.round(rng.uniform(1.0, 5.0, n), 2),
        "rocm_version": [i[0] for i in image], "os": [i[1] for i in image], "kernel": [i[2] for i in image],
    })


def write_quotes(out: Path, scale: Scale, offers: pl.DataFrame, now: dt.datetime,
                 rng: np.random.Generator) -> tuple[list[Path], int]:
    """quote-csv files, one per catalog scrape (each offer once), oldest first; returns (files, bad rows)."""
    out.mkdir(parents=True, exist_ok=True)
    n_offers = offers.height
    rounds = -(-scale.observations // n_offers)
    files, bad_total, written = [], 0, 0
    # One file per scrape: within a file an offer may appear once (twice is CONFLICTING_DUPLICATE).
    rounds_per_file = 1
    start = now - dt.timedelta(minutes=QUOTE_INTERVAL_MIN * rounds)
    for first_round in range(0, rounds, rounds_per_file):
        k = min(rounds_per_file, rounds - first_round)
        rows = min(k * n_offers, scale.observations - written)
        idx = np.arange(rows) % n_offers
        round_no = first_round + np.arange(rows) // n_offers
        observed = [start + dt.timedelta(minutes=QUOTE_INTERVAL_MIN * int(r)) for r in np.unique(round_no)]
        observed_at = np.array([t.strftime("%Y-%m-%dT%H:%M:%SZ") for t in observed])[round_no - first_round]
        o = offers[idx]
        per_node = rng.random(rows) < 0.3
        drift = rng.normal(1.0, 0.03, rows).clip(0.9, 1.1)
        per_gpu = (o["base_usd_per_gpu_hour"].to_numpy() * drift).round(3)
        price = np.where(per_node, per_gpu * o["gpus_per_node"].to_numpy(), per_gpu).round(3)
        frame = pl.DataFrame({
            "provider": o["provider"], "offer_id": o["offer_id"], "gpu_model": o["gpu_model"],
            "gpus_per_node": o["gpus_per_node"], "price": price.astype(str), "currency": "USD",
            "price_unit": "hour", "price_scope": np.where(per_node, "per_node", "per_gpu"),
            "billing_model": o["billing_model"], "billing_granularity": "hour", "observed_at": observed_at,
            "rocm_version": o["rocm_version"], "os": o["os"], "kernel": o["kernel"],
        })
        # A few rows carry the mistakes vendors make: a negative price, a unit nobody bills in.
        bad = rng.random(rows) < BAD_ROW_SHARE
        frame = frame.with_columns(
            pl.when(pl.Series(bad) & pl.Series(rng.random(rows) < 0.5)).then(pl.lit("-1.00"))
            .otherwise(pl.col("price")).alias("price"),
            pl.when(pl.Series(bad) & pl.Series(rng.random(rows) >= 0.5)).then(pl.lit("fortnight"))
            .otherwise(pl.col("price_unit")).alias("price_unit"),
        )
        changed = frame.select(((pl.col("price") == "-1.00") | (pl.col("price_unit") == "fortnight")).sum()).item()
        bad_total += changed
        path = out / f"catalog_{len(files):04d}.csv"
        frame.write_csv(path)
        files.append(path)
        written += rows
        if written >= scale.observations:
            break
    return files, bad_total


def workloads(scale: Scale, rng: np.random.Generator) -> list[dict]:
    """Inference workloads over the LLM catalog's models, precisions, engines and context lengths."""
    model_ids = _llm_model_ids()
    out = []
    for i in range(scale.workloads):
        w = {"id": f"bench-w{i:03d}", "kind": "inference", "unit": "requests", "quantity": 100_000,
             "model_id": model_ids[i % len(model_ids)], "precision": PRECISIONS[i % len(PRECISIONS)],
             "context_tokens": int(rng.choice([4096, 8192, 32768])), "concurrency": int(rng.choice([1, 8, 32]))}
        engine = ENGINES[i % len(ENGINES)]
        if engine:
            w["engine"] = engine
        out.append(w)
    return out


def write_runs(path: Path, scale: Scale, offers: pl.DataFrame, loads: list[dict], rng: np.random.Generator) -> int:
    """run-csv rows: requests completed per run, per workload × GPU model × count (no provider: any host)."""
    n = scale.runs
    configs = offers.select("canonical_gpu", "gpus_per_node").unique().sort("canonical_gpu", "gpus_per_node")
    c = configs[rng.integers(0, configs.height, n)]
    w = rng.integers(0, len(loads), n)
    completed = rng.integers(500, 5000, n)
    pl.DataFrame({
        "run_id": [f"bench-run-{i:07d}" for i in range(n)],
        "gpu_model": c["canonical_gpu"], "gpu_count": c["gpus_per_node"],
        "workload_id": [loads[i]["id"] for i in w], "unit": "requests",
        "completed": completed, "duration_s": np.round(completed / rng.uniform(0.5, 20.0, n), 1),
    }).write_csv(path)
    return n


def _detailed_run(rng: np.random.Generator, n: int, model_id: str, gpu_model: str, gpu_count: int,
                  precision: str, concurrency: int, started: dt.datetime) -> dict:
    """One `vllm bench serve --save-result --save-detailed` document with n requests.

    Per-request lists as the client writes them (seconds; a failed request has output 0, ttft 0,
    latency 0 and its error text). `itls` and `generated_texts` are left out: at 10M requests they
    would be tens of GB of input (output_len numbers per request); the adapter treats them as optional.
    """
    input_lens = rng.integers(128, 4096, n)
    output_lens = rng.integers(16, 1024, n)
    failed = rng.random(n) < 0.002
    ttfts = rng.gamma(2.0, 0.08, n) + 0.02
    tpots = rng.uniform(0.012, 0.045, n)
    latencies = ttfts + tpots * (output_lens - 1)
    output_lens, ttfts, latencies = (np.where(failed, 0, a) for a in (output_lens, ttfts, latencies))
    # Requests start as concurrency slots free up: the wall clock is the summed latency / slots.
    duration = float(latencies.sum() / concurrency + ttfts.mean())
    start_times = np.sort(rng.uniform(0, duration - latencies.max() if duration > latencies.max() else 0, n))
    completed = int(n - failed.sum())
    ok = ~failed
    total_in, total_out = int(input_lens[ok].sum()), int(output_lens[ok].sum())
    tpot_ok = ok & (output_lens > 1)

    def stats(name: str, seconds: np.ndarray) -> dict:
        ms = seconds * 1000
        return {f"mean_{name}_ms": float(ms.mean()), f"median_{name}_ms": float(np.median(ms)),
                f"std_{name}_ms": float(ms.std()), f"p99_{name}_ms": float(np.percentile(ms, 99))}

    return {
        "date": started.strftime("%Y%m%d-%H%M%S"), "endpoint_type": "vllm", "backend": "vllm", "label": None,
        "model_id": model_id, "tokenizer_id": model_id, "num_prompts": n, "request_rate": "inf",
        "burstiness": 1.0, "max_concurrency": concurrency,
        # --metadata KEY=VALUE pairs arrive as strings.
        "gpu_model": gpu_model, "gpu_count": str(gpu_count), "precision": precision,
        "duration": duration, "completed": completed, "failed": int(failed.sum()),
        "total_input_tokens": total_in, "total_output_tokens": total_out,
        "request_throughput": completed / duration, "request_goodput": None,
        "output_throughput": total_out / duration, "total_token_throughput": (total_in + total_out) / duration,
        "input_lens": input_lens.tolist(), "output_lens": output_lens.tolist(), "ttfts": ttfts.tolist(),
        "start_times": start_times.tolist(), "latencies": latencies.tolist(),
        "errors": np.where(failed, "Server disconnected without sending a response.", "").tolist(),
        **stats("ttft", ttfts[ok]), **stats("tpot", tpots[tpot_ok]), **stats("e2el", latencies[ok]),
    }


def write_requests(out: Path, scale: Scale, offers: pl.DataFrame, loads: list[dict], now: dt.datetime,
                   rng: np.random.Generator) -> list[Path]:
    """vllm-serve --save-detailed result files holding scale.requests requests in all."""
    out.mkdir(parents=True, exist_ok=True)
    configs = offers.select("canonical_gpu", "gpus_per_node").unique().sort("canonical_gpu", "gpus_per_node").rows()
    files, left = [], scale.requests
    while left > 0:
        n = min(scale.requests_per_file, left)
        gpu, count = configs[int(rng.integers(0, len(configs)))]
        load = loads[int(rng.integers(0, len(loads)))]
        doc = _detailed_run(rng, n, load["model_id"], gpu, count, load["precision"], load["concurrency"] * 8,
                            now - dt.timedelta(hours=len(files)))
        path = out / f"vllm-serve-{len(files):05d}.json"
        path.write_text(json.dumps(doc), encoding="utf-8")
        files.append(path)
        left -= n
    return files


def generate(out: Path, scale: Scale, seed: int = 11) -> dict:
    """Write every input under `out` and a sources.yaml + workloads.yaml declaring them."""
    rng = np.random.default_rng(seed)
    now = dt.datetime.now(dt.timezone.utc).replace(second=0, microsecond=0)
    offers = offer_catalog(scale, rng)
    quote_files, bad_rows = write_quotes(out / "quotes", scale, offers, now, rng)
    loads = workloads(scale, rng)
    (out / "runs").mkdir(parents=True, exist_ok=True)
    rows_runs = write_runs(out / "runs" / "runs.csv", scale, offers, loads, rng)
    request_files = write_requests(out / "requests", scale, offers, loads, now, rng)
    (out / "workloads.yaml").write_text(yaml.safe_dump({"workloads": loads}, sort_keys=False), encoding="utf-8")
    sources = {"sources": [
        {"name": "bench-catalog", "kind": "quotes", "format": "quote-csv", "path": "quotes/*.csv"},
        {"name": "bench-runs", "kind": "benchmarks", "format": "run-csv", "path": "runs/*.csv"},
    ]}
    if request_files:
        sources["sources"].append({"name": "bench-serve-detailed", "kind": "benchmarks", "format": "vllm-serve",
                                   "path": "requests/*.json", "defaults": {"engine": "vllm"}})
    (out / "sources.yaml").write_text(yaml.safe_dump(sources, sort_keys=False), encoding="utf-8")
    return {"quote_files": [str(p) for p in quote_files], "run_files": [str(out / "runs" / "runs.csv")],
            "request_files": [str(p) for p in request_files], "rows_requests": scale.requests,
            # Requests per file: a run the contract quarantines takes its requests with it.
            "requests_per_file": {p.name: min(scale.requests_per_file, scale.requests - i * scale.requests_per_file)
                                  for i, p in enumerate(request_files)},
            "rows_offers": scale.observations, "offers": scale.offers, "rows_runs": rows_runs,
            "bad_quote_rows": bad_rows, "workloads": len(loads), "sources": str(out / "sources.yaml"),
            "workloads_file": str(out / "workloads.yaml")}


def next_scrape(last_file: str) -> str:
    """The scrape after last_file (same offers, 15 minutes later), written beside it; returns its path."""
    last = Path(last_file)
    frame = pl.read_csv(last, infer_schema=False)
    later = frame.with_columns(
        (pl.col("observed_at").str.to_datetime(time_zone="UTC") + dt.timedelta(minutes=QUOTE_INTERVAL_MIN))
        .dt.strftime("%Y-%m-%dT%H:%M:%SZ").alias("observed_at"))
    path = last.with_name(f"catalog_{int(last.stem.split('_')[1]) + 1:04d}.csv")
    later.write_csv(path)
    return str(path)
