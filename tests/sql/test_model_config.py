"""model-config: a Hugging Face config.json adds a model the catalog lacks, so memory fit works for it."""
import csv
import json
import shutil

import pytest

from flows.ingest.adapters import ADAPTERS
from flows.ingest.adapters.model_config import architecture, parameter_count
from flows.ingest.validate import validate_frame
from models import CONTRACTS
from provider_eval.paths import REFERENCE_DIR
from tests.adapter_context import file_context
from tests.conftest import FIXTURES, query, run_refresh, write_sources

QWEN3 = FIXTURES / "models" / "qwen3-30b-a3b_config.json"
# The model card's YaRN instruction (tests/fixtures/models/SOURCES.md).
YARN = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}


def parse(path, defaults):
    ctx = file_context(path, defaults, source_name="qwen3")
    result = ADAPTERS["model-config"].parse(ctx)
    accepted, rejects = validate_frame(result.accepted, CONTRACTS["model_configs"])
    assert rejects.height == 0, rejects
    assert accepted.height + result.quarantined.height == result.rows_in == 1
    return result


def test_qwen3_30b_a3b_architecture_and_computed_parameters():
    (row,) = parse(QWEN3, {"model_id": "qwen3-30b-a3b", "hf_repo_id": "Qwen/Qwen3-30B-A3B"}).accepted.to_dicts()
    assert {k: row[k] for k in ("layers", "hidden_size", "attention_heads", "kv_heads", "head_dim", "attention",
                                "experts", "experts_per_token", "moe_intermediate_size", "vocab_size")} == {
        "layers": 48, "hidden_size": 2048, "attention_heads": 32, "kv_heads": 4, "head_dim": 128, "attention": "gqa",
        "experts": 128, "experts_per_token": 8, "moe_intermediate_size": 768, "vocab_size": 151936}
    # The model card: 30.5B in total, 3.3B activated, 29.9B non-embedding.
    assert row["params_basis"] == "computed"
    # The card truncates to one decimal (3.353B active is "3.3B").
    assert int(row["params_total"] / 1e8) == 305 and int(row["params_active"] / 1e8) == 33
    assert int((row["params_total"] - 2 * 151936 * 2048) / 1e8) == 299
    # config.json alone: 40960 positions, no rope scaling.
    assert (row["native_context_tokens"], row["max_context"], row["rope_scaling"]) == (40960, 40960, None)


def test_yarn_stated_in_sources_yaml_sets_native_and_maximum_context():
    (row,) = parse(QWEN3, {"model_id": "qwen3-30b-a3b", "rope_scaling": YARN}).accepted.to_dicts()
    assert (row["native_context_tokens"], row["max_context"]) == (32768, 131072)
    assert row["rope_scaling"] == "yarn factor 4 from 32768 (stated in sources.yaml)"


def test_stated_parameters_win_and_say_so():
    (row,) = parse(QWEN3, {"model_id": "qwen3-30b-a3b", "params_total": 30_500_000_000,
                           "params_active": 3_300_000_000}).accepted.to_dicts()
    assert (row["params_total"], row["params_active"], row["params_basis"]) == (30_500_000_000, 3_300_000_000, "stated")


def _catalog():
    with open(REFERENCE_DIR / "llm_models.csv", newline="") as fh:
        return {r["model_id"]: r for r in csv.DictReader(fh)}


def _config_of(row: dict, **extra) -> dict:
    return {"num_hidden_layers": int(row["layers"]), "hidden_size": int(row["hidden_size"]),
            "num_attention_heads": int(row["attention_heads"]), "num_key_value_heads": int(row["kv_heads"]),
            "intermediate_size": int(row["intermediate_size"]), "vocab_size": int(row["vocab_size"]),
            "max_position_embeddings": int(row["max_context"]), "tie_word_embeddings": False, **extra}


@pytest.mark.parametrize("model_id", ["llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b", "llama-2-70b"])
def test_formula_reproduces_the_catalogs_exact_parameter_counts(model_id):
    row = _catalog()[model_id]
    cfg = _config_of(row)
    assert parameter_count(cfg, architecture(cfg)) == (int(row["params_total"]), int(row["params_active"]))


def test_formula_on_moe_qkv_bias_and_mla_models_matches_the_published_rounded_counts():
    cat = _catalog()
    qwen = _config_of(cat["qwen2.5-72b"], model_type="qwen2")
    assert round(parameter_count(qwen, architecture(qwen))[0] / 1e9, 1) == 72.7
    mix = _config_of(cat["mixtral-8x7b"], num_local_experts=8, num_experts_per_tok=2)
    total, active = parameter_count(mix, architecture(mix))
    assert (round(total / 1e9, 1), round(active / 1e9, 1)) == (46.7, 12.9)
    # DeepSeek-V3 config.json (deepseek-ai/DeepSeek-V3): 671B total, 37B active without the MTP module.
    ds = {"model_type": "deepseek_v3", "num_hidden_layers": 61, "hidden_size": 7168, "num_attention_heads": 128,
          "q_lora_rank": 1536, "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
          "intermediate_size": 18432, "moe_intermediate_size": 2048, "n_routed_experts": 256, "n_shared_experts": 1,
          "num_experts_per_tok": 8, "first_k_dense_replace": 3, "vocab_size": 129280,
          "max_position_embeddings": 163840, "topk_method": "noaux_tc"}
    arch = architecture(ds)
    assert (arch["attention"], arch["kv_heads"], arch["kv_lora_rank"]) == ("mla", None, 512)
    total, active = parameter_count(ds, arch)
    assert (round(total / 1e9), round(active / 1e9)) == (671, 38)


@pytest.mark.parametrize("change,defaults,code", [
    ({"num_hidden_layers": None}, {"model_id": "x"}, "FIELD_MISSING"),
    ({"num_hidden_layers": "48"}, {"model_id": "x"}, "MODEL_CONFIG_INVALID"),
    ({"num_attention_heads": True}, {"model_id": "x"}, "MODEL_CONFIG_INVALID"),
    ({"hidden_size": -2048}, {"model_id": "x"}, "MODEL_CONFIG_INVALID"),
    ({"vocab_size": 1.5}, {"model_id": "x"}, "MODEL_CONFIG_INVALID"),
    ({}, {}, "FIELD_MISSING"),
    ({}, {"model_id": "x", "rope_scaling": "yarn"}, "MODEL_CONFIG_INVALID"),
])
def test_bad_configs_are_quarantined_with_the_field(tmp_path, change, defaults, code):
    doc = json.loads(QWEN3.read_text())
    doc.update(change)
    doc = {k: v for k, v in doc.items() if v is not None}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(doc))
    result = parse(path, defaults)
    assert result.quarantined["reason_code"].to_list() == [code]
    assert json.loads(result.quarantined["raw_record"][0])["model_type"] == "qwen3_moe"  # nothing lost


def test_mla_fields_are_checked_like_the_others(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
                                "vocab_size": 100, "max_position_embeddings": 128, "kv_lora_rank": 16,
                                "qk_rope_head_dim": 8, "qk_nope_head_dim": "16", "v_head_dim": 16}))
    (detail,) = parse(path, {"model_id": "x"}).quarantined["detail"].to_list()
    assert detail == "MODEL_CONFIG_INVALID: qk_nope_head_dim '16' is not a positive whole number"


def test_a_json_array_is_not_a_config(tmp_path):
    path = tmp_path / "config.json"
    path.write_text("[1, 2]")
    assert parse(path, {"model_id": "x"}).quarantined["reason_code"].to_list() == ["SCHEMA_DRIFT"]


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory):
    """The feasibility fixture's quotes plus Qwen3-30B-A3B declared by its config.json (YaRN as the card says)."""
    tmp = tmp_path_factory.mktemp("model_config")
    shutil.copy(FIXTURES / "feasibility" / "quotes.csv", tmp / "quotes.csv")
    shutil.copy(QWEN3, tmp / "config.json")
    # A run of the declared model, named by its HF repo id as vLLM writes it (hypothetical numbers).
    (tmp / "runs.csv").write_text("run_id,gpu_model,gpu_count,model_id,unit,completed,duration_s,notes\n"
                                  "r1,MI300X,1,Qwen/Qwen3-30B-A3B,requests,1000,3600,test fixture (hypothetical)\n"
                                  "r2,MI300X,1,Qwen/Qwen3-32B,requests,1000,3600,test fixture (hypothetical)\n")
    (tmp / "workloads.yaml").write_text("""workloads:
  - {id: qwen3-8k, kind: inference, unit: requests, quantity: 1000, model_id: Qwen/Qwen3-30B-A3B,
     precision: bf16, context_tokens: 8192, concurrency: 4}
  - {id: qwen3-100k, kind: inference, unit: requests, quantity: 1000, model_id: qwen3-30b-a3b,
     precision: bf16, context_tokens: 100000, concurrency: 1}
  - {id: qwen3-200k, kind: inference, unit: requests, quantity: 1000, model_id: qwen3-30b-a3b,
     precision: bf16, context_tokens: 200000, concurrency: 1}
""")
    sources = write_sources(tmp, [
        {"name": "test-quotes", "kind": "quotes", "format": "quote-csv", "path": "quotes.csv"},
        {"name": "test-runs", "kind": "benchmarks", "format": "run-csv", "path": "runs.csv"},
        {"name": "qwen3-config", "kind": "models", "format": "model-config", "path": "config.json",
         "defaults": {"model_id": "qwen3-30b-a3b", "hf_repo_id": "Qwen/Qwen3-30B-A3B", "rope_scaling": YARN,
                      "source_url": "https://huggingface.co/Qwen/Qwen3-30B-A3B/blob/main/config.json"}},
    ])
    path = tmp / "warehouse.duckdb"
    state = run_refresh(path, sources=sources, workloads=tmp / "workloads.yaml")
    assert state.is_completed(), state.message
    return path


def fit(warehouse, workload_id):
    return {r[0]: r[1:] for r in query(warehouse, "select gpu_model || '/' || gpu_count, verdict, reasons "
                                                  "from memory_fit where workload_id = ?", [workload_id])}


def test_memory_fit_works_for_a_model_declared_by_config_json(warehouse):
    by_config = fit(warehouse, "qwen3-8k")  # named by its HF repo id in workloads.yaml
    assert by_config["MI300X/1"][0] == "fits"
    assert not any("not in the LLM catalog" in r for _, reasons in by_config.values() for r in reasons)
    (n,) = query(warehouse, "select count(*) from quarantine where source_name = 'qwen3-config'")[0]
    assert n == 0


def test_benchmark_runs_may_name_a_declared_model_by_its_repo_id(warehouse):
    assert query(warehouse, "select run_id, model_id from benchmark_runs") == [("r1", "qwen3-30b-a3b")]
    assert query(warehouse, "select row_number, reason_code from quarantine where source_name = 'test-runs'") == \
        [(2, "MODEL_UNKNOWN")]  # Qwen3-32B is another model, declared nowhere


def test_context_beyond_native_needs_yarn_and_beyond_the_maximum_is_refused(warehouse):
    verdict, reasons = fit(warehouse, "qwen3-100k")["MI300X/1"]
    assert verdict == "fits"
    assert ("context of 100000 tokens is beyond the model's native 32768 tokens: it needs rope scaling "
            "(yarn factor 4 from 32768 (stated in sources.yaml)) enabled in the engine") in reasons
    verdict, reasons = fit(warehouse, "qwen3-200k")["MI300X/1"]
    assert verdict == "does_not_fit"
    assert "context of 200000 tokens exceeds the model's maximum of 131072" in reasons

