"""Provider catalog adapters: real samples and built fixtures give known canonical rows and named quarantines."""
from decimal import Decimal
from pathlib import Path

import polars as pl
import pytest

from provider_eval.paths import DATA_DIR
from tests.conftest import FIXTURES
from tests.ingest.test_quote_bad_inputs import stage

REAL = DATA_DIR / "samples" / "quotes" / "catalogs"
BUILT = FIXTURES / "catalogs"


def rows_of(path: Path, fmt: str, tmp_path: Path, provider: str):
    """Stage one file; assert row conservation; return (accepted, quarantined)."""
    out, rows, quarantined = stage(path, tmp_path, {"provider": provider}, fmt=fmt)
    assert out.status == "loaded", out.reason
    assert out.rows_in == rows.height + quarantined.height
    return rows, quarantined


def per_gpu_hour(row: dict) -> Decimal:
    """The offer's price per GPU-hour (the adapters keep the provider's own unit and scope)."""
    hours = {"hour": Decimal(1), "month": Decimal(730)}[row["price_unit"]]
    per = row["price_amount"] / hours
    return per / row["gpus_per_node"] if row["price_scope"] == "per_node" else per


def options(rows: pl.DataFrame) -> dict:
    """(offer_id, billing_model, tier, commitment hours) → price per GPU-hour rounded to cents."""
    return {(r["offer_id"], r["billing_model"], r["tier"],
             r["commitment_term_hours"] and int(r["commitment_term_hours"])): round(per_gpu_hour(r), 2)
            for r in rows.to_dicts()}


def reasons(quarantined: pl.DataFrame) -> list[tuple[int, str]]:
    return sorted(zip(quarantined["row_number"], quarantined["reason_code"]))


def test_digitalocean_mi300x_droplet_hourly_and_monthly(tmp_path):
    rows, q = rows_of(REAL / "digitalocean_v2_sizes.json", "digitalocean-sizes", tmp_path, "digitalocean")
    assert options(rows) == {("gpu-mi300x8-1536gb", "on_demand", None, None): Decimal("1.99"),
                             ("gpu-mi300x8-1536gb", "monthly", None, None): Decimal("2.03")}
    assert rows["price_amount"].sort().to_list() == [Decimal("15.92"), Decimal("11844.48")]
    assert set(rows["gpu_model"]) == {"MI300X"} and set(rows["gpu_name_raw"]) == {"amd_mi300x"}
    # 1536 GiB for 8 GPUs = 206 GB each, within the catalog's 192 GB ± 10%.
    assert set(rows["vram_bytes_stated"]) == {206158430208}
    assert reasons(q) == [(1, "NOT_A_GPU_OFFER"), (2, "GPU_VARIANT_UNKNOWN"), (2, "GPU_VARIANT_UNKNOWN")]  # nvidia_h100: SXM, PCIe or NVL


def test_vultr_metal_on_demand_monthly_and_preemptible(tmp_path):
    rows, q = rows_of(REAL / "vultr_v2_plans_metal.json", "vultr-plans", tmp_path, "vultr")
    mi = rows.filter(pl.col("gpu_model") == "MI300X")
    by_billing = {r["billing_model"]: r["price_amount"] for r in mi.to_dicts()}
    assert by_billing == {"on_demand": Decimal("17.52"), "monthly": Decimal("11773.44"), "spot": Decimal("14.72")}
    assert set(mi["gpus_per_node"]) == {8}  # only in the plan id
    assert options(mi)[("vbm-256c-2048gb-8-mi300x-gpu", "spot", None, None)] == Decimal("1.84")
    assert reasons(q) == [(2, "GPU_VARIANT_UNKNOWN")] * 3  # 'h100' is not guessed to be SXM or PCIe


def test_vultr_vm_plan_facts_from_the_id(tmp_path):
    rows, q = rows_of(REAL / "vultr_v2_plans.json", "vultr-plans", tmp_path, "vultr")
    (mi325,) = rows.to_dicts()
    # Preemptible-only plan: hourly_cost is the preemptible price; GPU count = 1536 GB / 256 GB.
    assert (mi325["offer_id"], mi325["gpu_model"], mi325["billing_model"], mi325["gpus_per_node"],
            mi325["price_amount"]) == ("vcg-mi325x-252c-2872g-1536vram", "MI325X", "spot", 6, Decimal("36.92"))
    assert "1536 GB VRAM / 256 GB per MI325X" in mi325["notes"]
    # Bare 'a100' (the id names no SXM4/PCIe variant) is ambiguous; the A40 is not in the catalog.
    assert dict(reasons(q)) == {1: "GPU_VARIANT_UNKNOWN", 2: "GPU_VARIANT_UNKNOWN", 3: "GPU_VARIANT_UNKNOWN",
                                4: "NOT_A_GPU_OFFER", 5: "GPU_ALIAS_UNKNOWN"}


def test_hotaisle_cents_per_hour(tmp_path):
    rows, q = rows_of(REAL / "hotaisle_available_vms.json", "hotaisle-available", tmp_path, "hotaisle")
    (vm,) = rows.to_dicts()
    assert (vm["gpu_model"], vm["gpus_per_node"], vm["price_amount"], vm["billing_model"]) == \
        ("MI300X", 1, Decimal("1.99"), "on_demand")
    assert q.height == 0


def test_hotaisle_null_body_means_none_available(tmp_path):
    empty = tmp_path / "none.json"
    empty.write_text("null\n")
    rows, q = rows_of(empty, "hotaisle-available", tmp_path / "s", "hotaisle")
    assert rows.height == q.height == 0


@pytest.mark.parametrize("name,provider,accepted,spot_rows", [
    ("skypilot_v6_do_vms.csv", "digitalocean", 0, 0),
    ("skypilot_v8_vast_vms.csv", "vast", 8, 0),  # SpotPrice 0.00 everywhere: no spot row
    ("skypilot_v8_lambda_vms_excerpt.csv", "lambda", 0, 0),
])
def test_skypilot_real_catalogs(tmp_path, name, provider, accepted, spot_rows):
    rows, q = rows_of(REAL / name, "skypilot-catalog", tmp_path, provider)
    assert rows.height == accepted
    assert rows.filter(pl.col("billing_model") == "spot").height == spot_rows
    assert set(q["reason_code"]) <= {"NOT_A_GPU_OFFER", "GPU_ALIAS_UNKNOWN", "GPU_VARIANT_UNKNOWN"}


def test_skypilot_vast_memory_is_per_node_and_region_non_ascii_safe(tmp_path):
    rows, _ = rows_of(REAL / "skypilot_v8_vast_vms.csv", "skypilot-catalog", tmp_path, "vast")
    two = rows.filter(pl.col("offer_id") == "2x-H200-32-65536@France, FR, EU").to_dicts()[0]
    # SizeInMiB 287542 is the 2-GPU total here: 143771 MiB = 150.75 GB per GPU.
    assert (two["gpus_per_node"], two["price_amount"], two["vram_bytes_stated"]) == \
        (2, Decimal("5.18"), 150754820096)


def test_skypilot_runpod_shape_memory_units_spot_and_unsafe_gpuinfo(tmp_path):
    rows, q = rows_of(BUILT / "skypilot_runpod_vms.csv", "skypilot-catalog", tmp_path, "runpod")
    assert options(rows) == {
        ("1x_MI300X_SECURE@CA", "on_demand", None, None): Decimal("2.49"),
        ("8x_MI300X_SECURE@CA", "on_demand", None, None): Decimal("2.49"),  # 19.92 per instance
        ("2x_MI300X_SPOT@EU-RO-1", "on_demand", None, None): Decimal("2.49"),
        ("2x_MI300X_SPOT@EU-RO-1", "spot", None, None): Decimal("1.50"),
    }
    # '192' under SizeInMiB is GB, not 192 MiB.
    assert rows.filter(pl.col("offer_id") == "1x_MI300X_SECURE@CA")["vram_bytes_stated"].item() == 192 * 10**9
    assert reasons(q) == [(5, "GPUINFO_MALFORMED"), (6, "PRICE_PLACEHOLDER"), (7, "GPU_ALIAS_UNKNOWN"),
                          (7, "GPU_ALIAS_UNKNOWN"), (8, "VRAM_MISMATCH"), (9, "NOT_A_GPU_OFFER")]
    evil = q.filter(pl.col("reason_code") == "GPUINFO_MALFORMED")["detail"].item()
    assert "not a Python literal" in evil  # read with ast.literal_eval: nothing was executed


def test_runpod_tiers_and_commitments(tmp_path):
    rows, q = rows_of(BUILT / "runpod_gputypes.json", "runpod-gputypes", tmp_path, "runpod")
    mi = options(rows.filter(pl.col("gpu_model") == "MI300X"))
    oam = "AMD Instinct MI300X OAM"
    assert mi == {(oam, "on_demand", "secure", None): Decimal("2.49"), (oam, "spot", "secure", None): Decimal("1.25"),
                  (oam, "reserved", "secure", 168): Decimal("2.39"), (oam, "reserved", "secure", 730): Decimal("2.29"),
                  (oam, "reserved", "secure", 2190): Decimal("2.19"), (oam, "reserved", "secure", 4380): Decimal("2.09")}
    # communityPrice 0 means "not offered in Community Cloud", not a free GPU: no row at all.
    assert rows.filter(pl.col("tier") == "community")["gpu_model"].to_list() == ["H100 SXM"]
    assert reasons(q) == [(3, "GPU_ALIAS_UNKNOWN"), (3, "GPU_ALIAS_UNKNOWN"), (4, "NOT_AVAILABLE")]


def test_vastai_offers(tmp_path):
    rows, q = rows_of(BUILT / "vastai_offers.json", "vastai-offers", tmp_path, "vast")
    assert options(rows) == {("9001", "on_demand", None, None): Decimal("2.00"),
                             ("9001", "spot", None, None): Decimal("1.20"),
                             ("9004", "on_demand", None, None): Decimal("2.10")}
    first = rows.filter(pl.col("offer_id") == "9001").to_dicts()[0]
    assert (first["storage_per_gb_month"], first["egress_per_gb"]) == (Decimal("0.15"), Decimal("0.005"))
    assert reasons(q) == [(2, "GPU_ALIAS_UNKNOWN"), (2, "GPU_ALIAS_UNKNOWN"), (3, "PRICE_NONPOSITIVE"),
                          (5, "SCHEMA_DRIFT")]


def test_gpuhunt_catalog(tmp_path):
    out, rows, q = stage(BUILT / "gpuhunt_catalog.csv", tmp_path, {}, fmt="gpuhunt-catalog")
    assert out.rows_in == rows.height + q.height == 7
    assert options(rows) == {("mi300x-1x@us-east1-a", "on_demand", None, None): Decimal("3.45"),
                             ("mi300x-1x@us-east1-a", "spot", None, None): Decimal("0.95"),
                             ("vbm-256c-2048gb-8-mi300x-gpu@ord", "on_demand", None, None): Decimal("2.19"),
                             ("vbm-256c-2048gb-8-mi300x-gpu@ord", "spot", None, None): Decimal("1.84")}
    assert set(rows["provider"]) == {"crusoe", "vultr"}
    assert reasons(q) == [(6, "NOT_A_GPU_OFFER"), (7, "BILLING_MODEL_UNKNOWN"), (8, "PRICE_NOT_NUMERIC")]


@pytest.mark.parametrize("fmt,body,code", [
    ("digitalocean-sizes", b'{"sizes": [', "JSON_MALFORMED"),
    ("digitalocean-sizes", b'{"droplets": []}', "SCHEMA_DRIFT"),
    ("vultr-plans", b"", "EMPTY"),
    ("runpod-gputypes", b'{"errors": [{"message": "unauthorized"}]}', "API_ERROR"),
    ("hotaisle-available", b'{"vms": []}', "SCHEMA_DRIFT"),
    ("vastai-offers", b"\xff\xfe[]", "ENCODING"),
    ("skypilot-catalog", b"InstanceType,Price\nx,1\n", "SCHEMA_DRIFT"),
    ("gpuhunt-catalog", b"instance_name,price\nx,1\n", "SCHEMA_DRIFT"),
])
def test_whole_file_problems_reject_the_file(tmp_path, fmt, body, code):
    path = tmp_path / "bad.dat"
    path.write_bytes(body)
    out, _, _ = stage(path, tmp_path / "s", {"provider": "p"}, fmt=fmt)
    assert out.status == "rejected" and out.reason.startswith(code), out.reason
