"""The one boundary for what a host sends: printable text, bounded size and depth, finite numbers, known shapes."""
import itertools
import math
import re

from flows.probe.probe import json_documents

# A real probe document is 3 levels deep with strings under 200 characters (a kernel command
# line is at most 2048 bytes on x86); these bounds are far above that and far below harm.
MAX_DEPTH = 32
MAX_STRING_CHARS = 8192
# Escape sequences first (CSI `ESC [ … final`, OSC `ESC ] … BEL|ST`, C1 CSI 0x9b, two-byte ESC x),
# so their printable tails ("[31m") do not survive as text either.
ESCAPE_SEQUENCE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x9b[0-?]*[ -/]*[@-~]"
                             r"|\x1b[@-_]?")
# The containers decide() reads, and what each must be; anything else is dropped with a reason.
SHAPES = {"findings": list, "gpus": list, "host": dict, "links": dict, "partition": dict, "rocm": dict,
          "torch": dict, "deep": dict, "tools": dict, "nvidia": dict}
LIST_OF_DICTS = {("findings",), ("gpus",), ("torch", "devices"), ("deep", "rvs_gst", "results"), ("deep", "babelstream", "runs")}
# Leaves decide() compares or groups by: a value of another type is dropped (as if not reported).
TEXT, WHOLE = (str,), (int,)
GPU_LEAVES = {"bdf": TEXT, "gfx_target": TEXT, "pci_device_id": TEXT, "market_name": TEXT, "product_name": TEXT,
              "driver_version": TEXT, "compute_partition": TEXT, "memory_partition": TEXT, "index": WHOLE,
              "partition_id": (int, str), "vram_bytes": WHOLE, "vendor": TEXT, "mig_mode": TEXT,
              "ecc_uncorrected_volatile": WHOLE}
LEAVES = {("rocm", "version_file"): TEXT, ("rocm", "amdsmi_rocm_version"): TEXT,
          ("links", "xgmi_enabled"): WHOLE, ("links", "xgmi_disabled"): WHOLE,
          ("partition", "compute"): (list,), ("partition", "memory"): (list,),
          ("torch", "device_count"): WHOLE, ("host", "os_pretty_name"): TEXT, ("host", "kernel_release"): TEXT}


def clean_text(text: str) -> str:
    """Host text with no escape sequence or control/format character (C0, C1, bidi overrides, zero-width)."""
    text = ESCAPE_SEQUENCE.sub("", text)
    # str.isprintable() is false for every Cc, Cf, Cs, Co, Cn, Zl, Zp and non-space Zs character.
    return "".join(c if c.isprintable() else " " for c in text)


def nesting_depth(text: str) -> int:
    """How deep brackets nest in text, outside JSON strings (checked before parsing: deep input overflows the parser)."""
    brackets = re.sub(r'[^\[\]{}]', "", re.sub(r'"(?:[^"\\]|\\.)*"', "", text))
    return max(itertools.accumulate(1 if b in "[{" else -1 for b in brackets), default=0)


def _clean(value, path: str, depth: int, problems: list[str]):
    if depth > MAX_DEPTH:
        problems.append(f"{path or 'document'}: nested more than {MAX_DEPTH} levels deep; dropped")
        return None
    if isinstance(value, str):
        if len(value) > MAX_STRING_CHARS:
            problems.append(f"{path}: a {len(value):,}-character string (limit {MAX_STRING_CHARS:,}); cut")
            value = value[:MAX_STRING_CHARS]
        return clean_text(value)
    if isinstance(value, float) and not math.isfinite(value):
        problems.append(f"{path}: {value} is not a measurement (not a finite number); dropped")
        return None
    if isinstance(value, dict):
        return {clean_text(str(k))[:200]: _clean(v, f"{path}.{clean_text(str(k))[:40]}".lstrip("."), depth + 1, problems)
                for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v, f"{path}[{i}]", depth + 1, problems) for i, v in enumerate(value)]
    return value


def _check_shapes(doc: dict, problems: list[str]) -> None:
    for key, kind in SHAPES.items():
        if doc.get(key) is not None and not isinstance(doc[key], kind):
            problems.append(f"{key}: a {type(doc[key]).__name__}, expected a {kind.__name__}; ignored")
            doc[key] = None
    for path in LIST_OF_DICTS:
        parent, value = doc, doc
        for part in path:
            parent, value = value, value.get(part) if isinstance(value, dict) else None
        if value is None:
            continue
        if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
            problems.append(f"{'.'.join(path)}: expected a list of objects; ignored")
            parent[path[-1]] = None
    for (container, key), kinds in LEAVES.items():
        _check_leaf(doc.get(container), key, kinds, f"{container}.{key}", problems)
    for i, gpu in enumerate(doc.get("gpus") or []):
        for key, kinds in GPU_LEAVES.items():
            _check_leaf(gpu, key, kinds, f"gpus[{i}].{key}", problems)
    for mode in ("compute", "memory"):
        values = (doc.get("partition") or {}).get(mode)
        if values and not all(isinstance(v, str) for v in values):
            problems.append(f"partition.{mode}: expected a list of text; ignored")
            doc["partition"][mode] = None
    for i, f in enumerate(doc.get("findings") or []):
        if not isinstance(f.get("code"), str):
            problems.append(f"findings[{i}].code: expected text, got {type(f.get('code')).__name__}")
            f["code"] = "MALFORMED_FINDING"


def _check_leaf(parent, key: str, kinds: tuple, path: str, problems: list[str]) -> None:
    if not isinstance(parent, dict) or parent.get(key) is None:
        return
    value = parent[key]
    if isinstance(value, bool) or not isinstance(value, kinds):
        problems.append(f"{path}: a {type(value).__name__}, expected {' or '.join(k.__name__ for k in kinds)}; ignored")
        parent[key] = None


def clean_document(doc) -> tuple[dict | None, list[str]]:
    """A parsed probe document made safe to decide on, store and print, and what had to be changed."""
    problems: list[str] = []
    cleaned = _clean(doc, "", 0, problems)
    if isinstance(cleaned, dict):
        _check_shapes(cleaned, problems)
    return cleaned, problems


def parse_probe_output(stdout: str) -> tuple[dict | None, list[str]]:
    """The last JSON object the probe printed (anything before it is ignored), cleaned; and the problems found."""
    depth = nesting_depth(stdout)
    if depth > MAX_DEPTH:
        return None, [f"the output nests {depth:,} levels deep (limit {MAX_DEPTH}); not parsed"]
    try:
        docs = [d for d in json_documents(stdout) if isinstance(d, dict)]
    except (RecursionError, MemoryError) as exc:  # belt and braces after the depth check
        return None, [f"the output could not be parsed ({type(exc).__name__})"]
    if not docs:
        return None, []
    return clean_document(docs[-1])

