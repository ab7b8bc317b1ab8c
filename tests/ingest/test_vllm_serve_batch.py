"""vllm-serve files of one source parsed together (one rules pass) give exactly what each file gives alone."""
import json
from pathlib import Path

from bench.synthetic import Scale, generate
from flows.ingest import stage
from tests.batch_equivalence import assert_together_equals_alone, landed_batch
from tests.benchmark_files import detailed_vllm_result, small_vllm_result, write_json

ROOT = Path(__file__).resolve().parent.parent.parent
REAL = ROOT / "tests" / "fixtures" / "benchmarks"


def _run(**overrides) -> dict:
    """A small run on 8 MI300X (named by --metadata), with fields replaced as given."""
    return small_vllm_result(**{"gpu_model": "MI300X", "gpu_count": "8", **overrides})


def _bad_and_odd_files(folder: Path) -> list[Path]:
    """Runs every rule names, whole-file rejections, an --append-result file with a bad line, and a good run."""
    out = [
        write_json(folder / "good.json", _run()),
        write_json(folder / "detailed.json", detailed_vllm_result(n_requests=50, n_failed=3)),
        write_json(folder / "negative.json", _run(output_throughput=-5.0)),
        write_json(folder / "nan.json", _run(duration=float("nan"))),
        write_json(folder / "no_gpu.json", {k: v for k, v in _run().items() if k != "gpu_model"}),
        write_json(folder / "unknown_model.json", _run(model_id="acme/NotAModel-7B")),
        write_json(folder / "not_a_result.json", {"hello": "world"}),
        write_json(folder / "a_list.json", [1, 2, 3]),
    ]
    (folder / "truncated.json").write_text(json.dumps(_run())[:-20], encoding="utf-8")
    (folder / "appended.json").write_text("\n".join([
        json.dumps(_run()), "{not json", json.dumps(_run(completed=200, num_prompts=100)),
        json.dumps(detailed_vllm_result(n_requests=20, n_failed=1))]) + "\n", encoding="utf-8")
    return out + [folder / "truncated.json", folder / "appended.json"]


def test_real_and_bad_files_together_equal_alone(tmp_path):
    paths = [REAL / "vllm_serve_current_mi300x.json", REAL / "vllm_serve_result_llama3.3-70b_tp8_A100_scalars.json",
             *_bad_and_odd_files(tmp_path)]
    batch = landed_batch(paths, "runs", "vllm-serve", {"engine": "vllm"})
    together = assert_together_equals_alone(batch)
    parsed = [p for p in together if isinstance(p, stage._Parsed)]
    # The batch really mixes outcomes: accepted runs with requests, quarantined runs, whole-file rejections.
    assert sum(p.parsed.accepted.height for p in parsed) >= 3
    assert sum(p.parsed.quarantined.height for p in parsed) >= 4
    assert any("benchmark_requests" in p.parsed.details for p in parsed)
    assert sum(isinstance(p, stage.FileOutcome) for p in together) >= 3
    # Lineage: each accepted run names its own file.
    for item, p in zip(batch, together):
        if isinstance(p, stage._Parsed) and p.parsed.accepted.height:
            assert set(p.parsed.accepted["file_sha256"]) == {item[0].file_sha256}
            assert set(p.parsed.accepted["source_file"]) == {Path(item[0].original_path).name}


def test_bench_request_files_together_equal_alone(tmp_path):
    """The bench's generated --save-detailed files (the shape that is parsed in thousands)."""
    gen = generate(tmp_path, Scale("batch", 1_000, 200, 500, 4, 3_000, 500))
    batch = landed_batch([Path(p) for p in gen["request_files"]], "runs", "vllm-serve", {"engine": "vllm"})
    together = assert_together_equals_alone(batch)
    assert sum(p.parsed.details["benchmark_requests"].height for p in together if "benchmark_requests" in p.parsed.details) > 0
