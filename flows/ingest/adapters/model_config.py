"""model-config: a Hugging Face config.json → one LLM catalog row (docs/formats/model-config.md).

The architecture fields are read as transformers names them (Llama, Qwen2/3, Qwen3-MoE, Mixtral,
DeepSeek-V3 MLA). The parameter count is computed from them by the formula in the docs unless the
source states it (`defaults: {params_total, params_active}`); `params_basis` says which.
"""
import json

import polars as pl

from flows.ingest.adapters.base import FileContext, ParseResult
from flows.ingest.adapters.quarantine import empty_quarantine
from flows.ingest.adapters.json_text import read_document
from models.model_configs import ModelConfig

# Fields a config must have for the memory formulas; the rest have documented defaults.
REQUIRED = ("num_hidden_layers", "hidden_size", "num_attention_heads", "vocab_size", "max_position_embeddings")


class ConfigProblem(ValueError):
    """A config.json field that is missing or not a positive whole number."""

    def __init__(self, code: str, detail: str):
        super().__init__(detail)
        self.code, self.detail = code, detail


def _whole(cfg: dict, key: str, default=None, required: bool = False) -> int | None:
    """A positive whole number at cfg[key] (JSON numbers only: true/false and "8" are not counts)."""
    value = cfg.get(key, default)
    if value is None:
        if required:
            raise ConfigProblem("FIELD_MISSING", f"config.json has no {key}")
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value) or value < 1:
        raise ConfigProblem("MODEL_CONFIG_INVALID", f"{key} {value!r} is not a positive whole number")
    return int(value)


def _text_config(doc: dict) -> dict:
    """Multimodal configs nest the language model under text_config; text-only ones are flat."""
    inner = doc.get("text_config")
    return {**doc, **inner} if isinstance(inner, dict) else doc


def architecture(cfg: dict) -> dict:
    """The catalog's architecture columns from a config.json (names as transformers writes them)."""
    n = lambda key, default=None, required=False: _whole(cfg, key, default, required)  # noqa: E731
    layers, hidden, heads = n("num_hidden_layers", required=True), n("hidden_size", required=True), \
        n("num_attention_heads", required=True)
    mla = cfg.get("kv_lora_rank") is not None
    experts = n("num_experts") or n("num_local_experts") or n("n_routed_experts")
    moe_inter = n("moe_intermediate_size") or (n("intermediate_size") if experts else None)
    return {
        "layers": layers, "hidden_size": hidden, "attention_heads": heads,
        "kv_heads": None if mla else n("num_key_value_heads", heads),
        "head_dim": None if mla else n("head_dim", hidden // heads),
        "attention": "mla" if mla else "gqa",
        "kv_lora_rank": n("kv_lora_rank"), "qk_rope_head_dim": n("qk_rope_head_dim"),
        "intermediate_size": n("intermediate_size"), "moe_intermediate_size": moe_inter,
        "experts": experts, "experts_per_token": n("num_experts_per_tok") if experts else None,
        "vocab_size": n("vocab_size", required=True),
        "sliding_window_tokens": n("sliding_window") if cfg.get("use_sliding_window", True) else None,
    }


def _moe_layers(cfg: dict, layers: int) -> int:
    """How many decoder layers are MoE: DeepSeek's first_k_dense_replace, Qwen's mlp_only_layers / sparse step."""
    if cfg.get("first_k_dense_replace") is not None:
        return layers - int(cfg["first_k_dense_replace"])
    dense = set(cfg.get("mlp_only_layers") or [])
    step = int(cfg.get("decoder_sparse_step") or 1)
    return sum(1 for i in range(layers) if i not in dense and (i + 1) % step == 0)


def parameter_count(cfg: dict, arch: dict) -> tuple[int, int]:
    """(total, active) parameters by the formula of docs/formats/model-config.md (weights, norms, router)."""
    h, heads, layers = arch["hidden_size"], arch["attention_heads"], arch["layers"]
    if arch["attention"] == "mla":
        n = lambda key, required=True: _whole(cfg, key, required=required)  # noqa: E731
        nope, rope, v, kv_rank = n("qk_nope_head_dim"), n("qk_rope_head_dim"), n("v_head_dim"), n("kv_lora_rank")
        q_rank = n("q_lora_rank", required=False)
        q = h * q_rank + q_rank + q_rank * heads * (nope + rope) if q_rank else h * heads * (nope + rope)
        attn = q + h * (kv_rank + rope) + kv_rank + kv_rank * heads * (nope + v) + heads * v * h
    else:
        hd, kv = arch["head_dim"], arch["kv_heads"]
        attn = 2 * h * heads * hd + 2 * h * kv * hd
        if cfg.get("attention_bias") or cfg.get("model_type") in ("qwen2", "qwen2_moe"):
            attn += heads * hd + 2 * kv * hd  # q, k, v biases
        if str(cfg.get("model_type", "")).startswith("qwen3"):
            attn += 2 * hd  # q_norm and k_norm
    norms = 2 * h
    experts = arch["experts"]
    moe_layers = _moe_layers(cfg, layers) if experts else 0
    dense_mlp = 3 * h * (arch["intermediate_size"] or 0)
    expert = 3 * h * (arch["moe_intermediate_size"] or 0)
    shared = int(cfg.get("n_shared_experts") or 0) * expert
    router = h * (experts or 0) + ((experts or 0) if cfg.get("topk_method") == "noaux_tc" else 0)
    embeddings = arch["vocab_size"] * h * (1 if cfg.get("tie_word_embeddings") else 2) + h  # + final norm
    dense_layers = layers - moe_layers
    total = embeddings + layers * (attn + norms) + dense_layers * dense_mlp \
        + moe_layers * ((experts or 0) * expert + shared + router)
    active = embeddings + layers * (attn + norms) + dense_layers * dense_mlp \
        + moe_layers * ((arch["experts_per_token"] or 0) * expert + shared + router)
    return total, active


def context(cfg: dict, stated_scaling: dict | None) -> tuple[int, int, str | None]:
    """(native tokens, maximum tokens, rope_scaling text) from max_position_embeddings and rope_scaling.

    YaRN / linear / dynamic scaling with original_max_position_embeddings O and factor F: native O,
    maximum O × F. A rope_scaling stated in sources.yaml (as a model card tells users to add it) wins."""
    positions = _whole(cfg, "max_position_embeddings", required=True)
    scaling = stated_scaling if stated_scaling is not None else cfg.get("rope_scaling")
    if not isinstance(scaling, dict):
        return positions, positions, None
    kind = scaling.get("rope_type") or scaling.get("type") or "rope"
    factor = scaling.get("factor")
    original = scaling.get("original_max_position_embeddings")
    if kind == "llama3" or not isinstance(factor, (int, float)) or not isinstance(original, int):
        # Llama 3.1's scaling is part of the released model: its whole window is native.
        return positions, positions, f"{kind} factor {factor} (in config.json; applied by default)"
    where = "stated in sources.yaml" if stated_scaling is not None else "in config.json"
    return original, int(original * factor), f"{kind} factor {factor:g} from {original} ({where})"


def _row(doc, ctx: FileContext) -> dict:
    if not isinstance(doc, dict):
        raise ConfigProblem("SCHEMA_DRIFT", "config.json must be one JSON object")
    d = ctx.defaults
    if not d.get("model_id"):
        raise ConfigProblem("FIELD_MISSING", "the source declares no model_id (sources.yaml defaults: {model_id: …})")
    cfg = _text_config(doc)
    arch = architecture(cfg)
    stated = d.get("rope_scaling")
    if stated is not None and not isinstance(stated, dict):
        raise ConfigProblem("MODEL_CONFIG_INVALID", "defaults.rope_scaling must be a mapping like config.json's")
    native, maximum, scaling = context(cfg, stated)
    if d.get("params_total") is not None:
        total = _whole(d, "params_total")
        active, basis = _whole(d, "params_active") or total, "stated"
    else:
        (total, active), basis = parameter_count(cfg, arch), "computed"
    return {
        "source_name": ctx.source_name, "source_file": ctx.original_name, "file_sha256": ctx.file_sha256,
        "row_number": 1, "model_id": str(d["model_id"]).strip().lower(),
        "hf_name": d.get("hf_repo_id") or cfg.get("_name_or_path") or None,
        "params_total": total, "params_active": active, "params_basis": basis, **arch,
        "max_context": maximum, "native_context_tokens": native, "rope_scaling": scaling,
        "source": d.get("source_url") or f"config.json {ctx.original_name} (source {ctx.source_name})",
    }


def parse(ctx: FileContext) -> ParseResult:
    """Read one config.json into one model_configs row, or quarantine it with the field that is wrong."""
    doc = read_document(ctx)
    schema = {name: col.dtype.type for name, col in ModelConfig.to_schema().columns.items()}
    try:
        row = _row(doc, ctx)
    except (ConfigProblem, KeyError, TypeError, ValueError, ZeroDivisionError) as exc:
        code, detail = (exc.code, exc.detail) if isinstance(exc, ConfigProblem) else \
            ("MODEL_CONFIG_INVALID", f"config.json cannot be read as an LLM architecture: {exc!r}")
        bad = pl.DataFrame({"row_number": [1], "reason_code": [code], "detail": [f"{code}: {detail}"],
                            "raw_record": [json.dumps(doc, sort_keys=True, default=str)]})
        return ParseResult(pl.DataFrame(schema=schema), bad.cast(empty_quarantine().schema), 1)
    return ParseResult(pl.DataFrame([row], schema=schema), empty_quarantine(), 1)
