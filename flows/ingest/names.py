"""One resolver for GPU and LLM names as real files write them → catalog ids, or a reason code.

Every adapter, the CLI and feasibility go through here (docs/quarantine.md "How names are resolved").
GPU rules, in order:
  1. ™ ® © are dropped; any other character outside printable ASCII is refused (homoglyphs, NBSP,
     zero-width, full-width are never folded into a real GPU name).
  2. Case-folded; `_ - / ( ) [ ] ,` are separators.
  3. An exact row of data/reference/gpu_aliases.csv wins (true aliases: "MI300X-O", "H100 80GB HBM3").
  4. Otherwise the words are read: vendor/family words (AMD, NVIDIA, Instinct, Radeon, Tesla, GeForce,
     Accelerator, GPU) are dropped; a form factor (OAM, SXM[n], PCIe, NVL) must agree with the
     catalog's; partition and power suffixes (NPS1/NPS4, SPX/DPX/QPX/CPX, 750W) and an SR-IOV "VF"
     are dropped; a memory size and type ("192GB HBM3") must agree with the catalog (else
     VRAM_MISMATCH). What is left is matched to a catalog gpu_model read the same way.
  5. A family name covering several variants (gpu_ambiguous_names.csv: "H100", "MI300") stays
     GPU_VARIANT_UNKNOWN unless its form factor or memory leaves exactly one variant.
LLM (model_id) rules: case-folded; a Hugging Face repo id's organisation is dropped; the catalog's model_id,
hf_name and hf_repo_ids match; else the usual release/quantisation suffixes are stripped one by one
(-Instruct, -Chat, -hf, -FP8, -FP8-KV, -FP8-dynamic, -AWQ, -GPTQ, -MXFP4, …). A stripped suffix
that names a precision is kept as `implied_precision`.
"""
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from provider_eval import reference
from provider_eval.paths import REFERENCE_DIR

# Stated memory (in a GPU name, a vram_gb field) vs the catalog's: one tolerance, conventions.csv.
VRAM_MISMATCH_TOLERANCE = float(reference.convention("vram_mismatch_tolerance"))
VENDOR_WORDS = {"amd", "nvidia", "instinct", "radeon", "tesla", "geforce", "accelerator", "gpu"}
# Trademark signs on vendor pages ("AMD Instinct™ MI300X"): not letters, so no look-alike risk.
MARKS = str.maketrans("", "", "\u2122\u00ae\u00a9")
PARTITION_WORD = re.compile(r"^(nps[1248]|spx|dpx|tpx|qpx|cpx|\d+w|vf)$")
MEMORY_SIZE = re.compile(r"^(\d+(?:\.\d+)?)(gb|gib)$")
MEMORY_TYPE = re.compile(r"^(hbm\d[a-z]?|gddr\d[a-z]?)$")
SEPARATORS = re.compile(r"[_\-/()\[\],]+")


def _form_factor(word: str) -> str | None:
    """The form-factor family a word names (SXM5 → sxm, NVL72 → nvl), or None."""
    for family in ("oam", "sxm", "pcie", "nvl"):
        if re.fullmatch(family + r"\d*", word):
            return family
    return None


@dataclass(frozen=True)
class ParsedGpu:
    """A GPU name read word by word: the remaining core and the facts its suffixes state."""

    core: str
    form_factor: str | None = None
    memory_gb: float | None = None
    memory_type: str | None = None


@dataclass(frozen=True)
class GpuResolution:
    """A name's catalog gpu_model, or the reason code and message why it has none."""

    gpu_model: str | None
    reason_code: str | None = None
    detail: str | None = None


def _words(name: str) -> list[str]:
    text = SEPARATORS.sub(" ", name.lower())
    text = re.sub(r"\b(\d+(?:\.\d+)?) (gb|gib)\b", r"\1\2", text)  # "80 GB" is one fact
    return text.split()


def parse_gpu(name: str) -> ParsedGpu:
    """Split a GPU name into core words and the form factor / memory its suffixes state."""
    core, ff, mem, mtype = [], None, None, None
    for w in _words(name):
        if w in VENDOR_WORDS or PARTITION_WORD.match(w):
            continue
        if (m := MEMORY_SIZE.match(w)):
            mem = float(m.group(1))
        elif MEMORY_TYPE.match(w):
            mtype = w
        elif _form_factor(w):
            ff = _form_factor(w)
        else:
            core.append(w)
    return ParsedGpu(" ".join(core), ff, mem, mtype)


def _key(name: str) -> str:
    return " ".join(_words(name))


@dataclass(frozen=True)
class CatalogGpu:
    """A catalog GPU as the rules compare it."""

    gpu_model: str
    parsed: ParsedGpu
    memory_gb: float | None
    memory_type: str | None


@dataclass(frozen=True)
class GpuNames:
    """The reference tables the GPU rules read, loaded once."""

    aliases: dict[str, str]
    ambiguous: dict[str, list[str]]
    catalog: list[CatalogGpu]

    def resolve(self, name) -> GpuResolution:
        """Resolve one GPU name by the module's rules."""
        if name is None or not str(name).strip():
            return GpuResolution(None, "FIELD_MISSING", "gpu_model is empty")
        name = str(name).translate(MARKS)
        odd = next((c for c in name if not 0x20 <= ord(c) <= 0x7e), None)
        if odd is not None:
            return GpuResolution(None, "GPU_ALIAS_UNKNOWN",
                                 f"gpu_model {name!r} holds the non-ASCII character U+{ord(odd):04X} "
                                 "(look-alike characters are never folded into a catalog name)")
        key = _key(name)
        if key in self.aliases:
            return GpuResolution(self.aliases[key])
        parsed = parse_gpu(name)
        if parsed.core in self.ambiguous:
            return self._variant(name, parsed, self.ambiguous[parsed.core])
        return self._catalog(name, parsed)

    def _variant(self, name: str, parsed: ParsedGpu, variants: list[str]) -> GpuResolution:
        """A family name: resolved only when its suffixes leave exactly one variant."""
        left = [v for v in variants if _agrees(parse_gpu(v), parsed)]
        if len(left) == 1 and (parsed.form_factor or parsed.memory_gb):
            variant = parse_gpu(left[0])  # the variant's words, with the memory the name states
            chosen = self._catalog(name, ParsedGpu(variant.core, variant.form_factor,
                                                   parsed.memory_gb, parsed.memory_type))
            if chosen.gpu_model or chosen.reason_code == "VRAM_MISMATCH":
                return chosen
            return GpuResolution(None, "GPU_ALIAS_UNKNOWN",
                                 f"gpu_model '{name}' names the {left[0]}, which is not in data/reference/gpus.csv")
        return GpuResolution(None, "GPU_VARIANT_UNKNOWN",
                             f"gpu_model '{name}' names several variants ({' | '.join(variants)}): state which one")

    def _catalog(self, name: str, parsed: ParsedGpu) -> GpuResolution:
        """Match the core words and form factor against the catalog, then check the stated memory."""
        found = [c for c in self.catalog if c.parsed.core == parsed.core
                 and (parsed.form_factor is None or parsed.form_factor == c.parsed.form_factor)]
        if len(found) != 1:
            return GpuResolution(None, "GPU_ALIAS_UNKNOWN",
                                 f"gpu_model '{name}' is not a catalog GPU (data/reference/gpus.csv, "
                                 "gpu_aliases.csv; name rules in docs/quarantine.md)")
        gpu = found[0]
        if parsed.memory_gb is not None and gpu.memory_gb and \
                abs(parsed.memory_gb - gpu.memory_gb) > gpu.memory_gb * VRAM_MISMATCH_TOLERANCE:
            return GpuResolution(None, "VRAM_MISMATCH",
                                 f"gpu_model '{name}' states {parsed.memory_gb:g} GB; the catalog's "
                                 f"{gpu.gpu_model} has {gpu.memory_gb:g} GB")
        if parsed.memory_type and gpu.memory_type and parsed.memory_type != gpu.memory_type:
            return GpuResolution(None, "VRAM_MISMATCH",
                                 f"gpu_model '{name}' states {parsed.memory_type.upper()}; the catalog's "
                                 f"{gpu.gpu_model} has {gpu.memory_type.upper()}")
        return GpuResolution(gpu.gpu_model)


def _agrees(variant: ParsedGpu, stated: ParsedGpu) -> bool:
    """A variant is still possible when every fact both state is the same."""
    return ((variant.form_factor is None or stated.form_factor is None or variant.form_factor == stated.form_factor)
            and (variant.memory_gb is None or stated.memory_gb is None or variant.memory_gb == stated.memory_gb))


@lru_cache(maxsize=4)
def gpu_names(reference_dir: Path = REFERENCE_DIR) -> GpuNames:
    """The GPU rules' tables from data/reference (gpus.csv, gpu_aliases.csv, gpu_ambiguous_names.csv)."""
    catalog = []
    for row in reference.rows("gpus.csv", reference_dir):
        parsed = parse_gpu(row["gpu_model"])
        # The catalog's form factor column ("SXM5", "OAM", "PCIe card") when the name does not say it.
        ff = parsed.form_factor or _form_factor((row.get("form_factor") or "").lower().split(" ")[0])
        mtype = (row.get("memory_type") or "").lower().split(" ")[0] or None
        mem = float(row["memory_gb_marketed"]) if row.get("memory_gb_marketed") else None
        catalog.append(CatalogGpu(row["gpu_model"], ParsedGpu(parsed.core, ff), mem, mtype))
    aliases = {_key(r["alias"]): r["gpu_model"] for r in reference.rows("gpu_aliases.csv", reference_dir)}
    ambiguous = {parse_gpu(r["name"]).core: [v.strip() for v in r["variants"].split("|")]
                 for r in reference.rows("gpu_ambiguous_names.csv", reference_dir)}
    return GpuNames(aliases, ambiguous, catalog)


def resolve_gpu(name, reference_dir: Path = REFERENCE_DIR) -> GpuResolution:
    """Resolve one GPU name against data/reference (see the module docstring for the rules)."""
    return _resolve_gpu_cached(name if name is None else str(name), reference_dir)


@lru_cache(maxsize=65536)
def _resolve_gpu_cached(name, reference_dir: Path) -> GpuResolution:
    return gpu_names(reference_dir).resolve(name)


# ---- LLMs (model_id) ------------------------------------------------------------------------------

# Release and quantisation suffixes seen on Hugging Face repo ids, longest first, and the precision
# each implies (None: the suffix says nothing about weight precision).
MODEL_SUFFIXES = [
    ("-fp8-dynamic", "fp8"), ("-fp8-kv", "fp8"), ("-w8a8-fp8", "fp8"), ("-fp8", "fp8"),
    ("-mxfp4", "mxfp4"), ("-fp4", "fp4"), ("-nvfp4", "fp4"), ("-w4a16", "int4"), ("-awq", "int4"),
    ("-gptq-int4", "int4"), ("-gptq", "int4"), ("-int4", "int4"), ("-int8", "int8"), ("-w8a8", "int8"),
    ("-bf16", "bf16"), ("-fp16", "fp16"),
    ("-instruct", None), ("-chat", None), ("-hf", None), ("-it", None), ("-base", None),
]


@dataclass(frozen=True)
class ModelResolution:
    """A model name's catalog model_id (or None) and any precision its suffix implies."""

    model_id: str | None
    implied_precision: str | None = None


@lru_cache(maxsize=4)
def model_names(reference_dir: Path = REFERENCE_DIR) -> dict[str, str]:
    """Lower-cased model_id, hf_name and every hf_repo_ids entry (without organisation) → model_id."""
    out = {}
    for row in reference.rows("llm_models.csv", reference_dir):
        names = [row["model_id"], row.get("hf_name") or "", *(row.get("hf_repo_ids") or "").split("|")]
        for n in names:
            n = n.strip().lower()
            if n:
                out[n] = row["model_id"]
                out[n.rsplit("/", 1)[-1]] = row["model_id"]
    return out


@lru_cache(maxsize=65536)
def resolve_model(name, reference_dir: Path = REFERENCE_DIR, declared: tuple = ()) -> ModelResolution:
    """A model name or HF repo id → catalog model_id, stripping the usual suffixes; None when unknown.

    `declared`: (name, model_id) pairs of models that model-config sources add to the catalog."""
    if name is None or not str(name).strip():
        return ModelResolution(None)
    known = model_names(reference_dir)
    if declared:
        known = {**{k: m for n, m in declared for k in (n.lower(), n.lower().rsplit("/", 1)[-1])}, **known}
    text = str(name).strip().lower()
    if text in known:
        return ModelResolution(known[text])
    text = text.rsplit("/", 1)[-1]
    implied = None
    while True:
        if text in known:
            return ModelResolution(known[text], implied)
        suffix = next(((s, p) for s, p in MODEL_SUFFIXES if text.endswith(s)), None)
        if suffix is None:
            return ModelResolution(None, implied)
        text = text[: -len(suffix[0])]
        implied = implied or suffix[1]
