"""workloads.yaml memory-fit fields: parsed with their types, bad values named by line and field."""
import pytest

from flows.ingest.workloads import load_workloads
from provider_eval.errors import ConfigError

BASE = "workloads:\n  - id: w1\n    kind: inference\n    unit: requests\n    quantity: 10\n"


def write(tmp_path, extra: str):
    path = tmp_path / "workloads.yaml"
    path.write_text(BASE + extra, encoding="utf-8")
    return path


def test_fit_fields_are_read_with_their_types(tmp_path):
    frame = load_workloads(write(tmp_path, (
        "    model_id: llama-3.1-70b\n    precision: bf16\n    kv_precision: FP8\n    context_tokens: 8192\n"
        "    concurrency: 16\n    engine: vLLM\n    mode: inference\n    gpu_memory_utilization: 0.92\n"
        "    activation_checkpointing: Full\n    lora_rank: 8\n")))
    row = frame.row(0, named=True)
    assert row["context_tokens"] == 8192 and row["concurrency"] == 16 and row["lora_rank"] == 8
    assert row["kv_precision"] == "fp8" and row["engine"] == "vllm" and row["mode"] == "inference"
    assert row["gpu_memory_utilization"] == 0.92 and row["activation_checkpointing"] == "full"


def test_fit_fields_are_optional(tmp_path):
    row = load_workloads(write(tmp_path, "")).row(0, named=True)
    assert row["model_id"] is None and row["mode"] is None and row["context_tokens"] is None


@pytest.mark.parametrize("extra, words", [
    ("    context_tokens: lots\n", "context_tokens 'lots' must be a whole number"),
    ("    concurrency: 0\n", "concurrency"),
    ("    mode: pretraining\n", "mode"),
    ("    gpu_memory_utilization: 1.5\n", "gpu_memory_utilization"),
    ("    activation_checkpointing: maybe\n", "activation_checkpointing 'maybe' must be one of none, selective, full"),
    ("    activation_checkpointing: true\n", "true/false are ambiguous"),
    ("    mode: qlora\n    precision: bf16\n", "precision 'bf16': QLoRA fine-tunes adapters on a quantised base"),
    ("    mode: qlora\n    precision: FP16\n", "a FP16 base is 16-bit or wider"),
])
def test_bad_fit_fields_name_the_line_and_field(tmp_path, extra, words):
    with pytest.raises(ConfigError) as exc:
        load_workloads(write(tmp_path, extra))
    assert "line 2" in str(exc.value) and words in str(exc.value)


def test_a_qlora_workload_without_a_precision_is_an_nf4_base_not_bf16(tmp_path):
    """The loader leaves the precision unstated; int_fit_requests reads it as nf4 (tests/sql/test_feasibility_memory.py)."""
    row = load_workloads(write(tmp_path, "    model_id: llama-3.1-8b\n    mode: qlora\n")).row(0, named=True)
    assert row["mode"] == "qlora" and row["precision"] is None


def test_a_qlora_workload_may_state_another_quantised_base(tmp_path):
    row = load_workloads(write(tmp_path, "    mode: qlora\n    precision: int4\n")).row(0, named=True)
    assert row["precision"] == "int4"
