"""A hostile or broken host: whatever its probe prints, the verdict is clear, printable and never a false pass."""
import copy
import json
import math
import subprocess
import sys

import pytest

from flows.probe import probe, sanitise
from tests.sql_verdict import decide
from tests import fake_host

MI300X_8 = {"offer_id": "o8", "provider": "p", "gpu_model": "MI300X", "gpus_per_node": 8}
# Terminal escapes a host could hide in any string: colour, clear screen, OSC title / hyperlink,
# C1 CSI, a bare ESC, bidi overrides that reorder what is shown, zero-width characters.
NASTY = ["\x1b[31mred\x1b[0m", "\x1b[2J\x1b[H", "\x1b]0;pwned\x07", "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\",
         "\x9b31m", "\x1b", "\u202eevil\u202c", "\u2066iso\u2069", "zero\u200bwidth", "\x00nul\x7f", "line\u2028sep"]


@pytest.fixture(scope="module")
def real_doc(tmp_path_factory) -> dict:
    """The probe's own document for an 8 × MI300X host (the fake host serves captured tool output)."""
    env = fake_host.mi300x_host(tmp_path_factory.mktemp("host"))
    done = subprocess.run([sys.executable, probe.__file__, "--no-bench"], env=fake_host.env_for(env),
                          capture_output=True, text=True, timeout=120, check=True)
    doc = json.loads(done.stdout)
    doc["torch"].update(gemm_bf16_8192_tflops=650.0, hbm_copy_gbps=4600.0)
    assert decide(doc, MI300X_8).verdict == "pass"
    return doc


def decided(doc) -> tuple:
    """What validate_host does with the host's stdout: store it raw, land it (cleaned once, by sanitise.py), decide in SQL."""
    text = json.dumps(doc) if not isinstance(doc, str) else doc
    cleaned, _ = sanitise.parse_probe_output(text)
    return decide(text, MI300X_8), cleaned


def strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)


def shown(text: str) -> bool:
    """True when text holds nothing a terminal would act on."""
    return text.isprintable() and "\x1b" not in text and "\x9b" not in text


@pytest.mark.parametrize("nasty", NASTY)
def test_host_strings_are_cleaned_everywhere(real_doc, nasty):
    doc = copy.deepcopy(real_doc)
    doc["rocm"]["version_file"] = "6.2.3" + nasty
    doc["gpus"][0]["market_name"] = nasty
    doc["gpus"][0]["gfx_target"] = "gfx942" + nasty
    doc["host"]["os_pretty_name"] = nasty
    doc["findings"].append({"code": "XGMI_LINK_ERRORS" + nasty, "message": nasty, "evidence": nasty})
    doc["links"][nasty] = nasty
    result, cleaned = decided(doc)
    assert all(shown(s) for s in strings(cleaned))
    assert all(shown(r.text()) for r in result.reasons)
    assert all(shown(r.measured) for r in result.reasons if r.measured)
    # The escape is gone whole, not only its ESC byte: no "[31m" or "]0;" tail is left to read.
    rocm = next(r.measured for r in result.reasons if r.check == "rocm")
    assert rocm.startswith("6.2.3") and "[31m" not in rocm and "]0;" not in rocm


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_non_finite_measurements_never_pass_a_floor(real_doc, value):
    doc = copy.deepcopy(real_doc)
    doc["torch"]["gemm_bf16_8192_tflops"] = value
    text = json.dumps(doc)  # Python writes NaN / Infinity, as a hostile host may
    result, _ = decided(text)
    assert result.verdict == "inconclusive"
    assert any("not a finite number" in r.message for r in result.reasons)
    # sanitise.py drops the value (a probe_document problem): never a measurement that meets the floor.
    assert ("gemm_bf16_8192", "pass") not in {(r.check, r.status) for r in result.reasons}


@pytest.mark.parametrize("value", ["650", True, 10 ** 400, [650], {"v": 650}])
def test_a_measurement_that_is_not_a_number_is_inconclusive(real_doc, value):
    doc = copy.deepcopy(real_doc)
    doc["torch"]["gemm_bf16_8192_tflops"] = value
    result, _ = decided(doc)
    assert result.verdict == "inconclusive", [r.text() for r in result.reasons]


@pytest.mark.parametrize("mutate", [
    lambda d: d.update(gpus="eight"),
    lambda d: d.update(gpus=[1, 2, 3]),
    lambda d: d.update(findings={"code": "GPU_HANG"}),
    lambda d: d.update(findings=[{"code": ["GPU_HANG"], "message": 1}]),
    lambda d: d.update(torch=[]),
    lambda d: d["torch"].update(devices="all", device_count=8, hip="6.2"),
    lambda d: d.update(partition={"compute": 5, "memory": None}),
    lambda d: d.update(rocm={"version_file": 6.2}),
    lambda d: d.update(deep={"rccl_allreduce": {"busbw_in_place_gbps": "fast"}, "rvs_gst": {"results": "ok"}}),
    lambda d: d.update(deep={"transferbench_a2a": {"average_gbps": "fast"}, "babelstream": {"runs": "ok"},
                             "rocblas_fp32_4000": [1]}),
    lambda d: [g.update(vram_bytes="192 GB") for g in d["gpus"]],
    lambda d: [g.update(vram_bytes=True) for g in d["gpus"]],
    lambda d: [g.update(index={"i": 0}, bdf=[1]) for g in d["gpus"]],
])
def test_wrong_types_give_a_clear_inconclusive_not_a_crash(real_doc, mutate):
    doc = copy.deepcopy(real_doc)
    mutate(doc)
    result, _ = decided(doc)
    assert result.verdict == "inconclusive", [r.text() for r in result.reasons]
    assert any(r.status == "inconclusive" and r.message for r in result.reasons)


def test_wrong_container_types_are_named(real_doc):
    doc = copy.deepcopy(real_doc)
    doc["gpus"] = "eight"
    result, _ = decided(doc)
    assert result.verdict == "inconclusive"
    assert any("gpus: a str, expected a list" in r.message for r in result.reasons)


def test_deep_nesting_is_refused_before_parsing():
    result, cleaned = decided("[" * 200_000 + "]" * 200_000)
    assert cleaned is None and result.verdict == "inconclusive"
    assert any("nests 200,000 levels deep" in r.message for r in result.reasons)


def test_deep_nesting_inside_a_document_is_dropped(real_doc):
    doc = copy.deepcopy(real_doc)
    nested = "x"
    for _ in range(sanitise.MAX_DEPTH + 5):
        nested = {"a": nested}
    doc["host"]["extra"] = nested
    text = json.dumps(doc)
    # Past the whole-output limit: not parsed at all; a little deeper than real: the subtree goes.
    assert sanitise.nesting_depth(text) > sanitise.MAX_DEPTH
    result, _ = decided(text)
    assert result.verdict == "inconclusive"


def test_huge_strings_are_cut_and_make_it_inconclusive(real_doc):
    doc = copy.deepcopy(real_doc)
    doc["gpus"][0]["market_name"] = "M" * 1_000_000
    result, cleaned = decided(doc)
    assert len(cleaned["gpus"][0]["market_name"]) == sanitise.MAX_STRING_CHARS
    assert result.verdict == "inconclusive"
    assert any("1,000,000-character string" in r.message for r in result.reasons)


def test_a_real_document_is_unchanged_by_cleaning(real_doc):
    cleaned, problems = sanitise.clean_document(copy.deepcopy(real_doc))
    assert cleaned == real_doc and problems == []


def test_brackets_inside_strings_do_not_count_as_nesting():
    assert sanitise.nesting_depth(json.dumps({"a": "[[[[[[[[" * 100, "b": ["x"]})) == 2
