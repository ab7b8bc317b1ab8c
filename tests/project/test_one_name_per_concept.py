"""One name per concept (issue 19): the reference tables and the public tables never spell one two ways."""
import csv
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "data" / "reference"

# Spellings retired for a concept that has one name; any of them coming back is a second name.
RETIRED = {
    "model": "gpu_model (a catalog GPU) or model_id (an LLM)",
    "pytorch_version": "torch_version (a full PyTorch release) or torch_major_minor (2.8)",
    "gpus": "gpus_per_node (GPUs in one node) or gpu_count (GPUs in one configuration)",
    "num_gpus": "gpus_per_node or gpu_count",
    "n_gpus": "gpus_per_node or gpu_count",
    "candidate_gpus": "candidate_gpu_count",
}


def _rows(path: Path) -> tuple[list[str], list[dict]]:
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        return list(reader.fieldnames or []), list(reader)


@pytest.mark.parametrize("path", sorted(REFERENCE.glob("*.csv")), ids=lambda p: p.name)
def test_reference_columns_use_the_one_name(path):
    header, _ = _rows(path)
    assert {c: RETIRED[c] for c in header if c in RETIRED} == {}


@pytest.mark.parametrize("path", sorted(REFERENCE.glob("*.csv")), ids=lambda p: p.name)
def test_a_column_of_catalog_gpus_is_called_gpu_model(path):
    catalog = {r["gpu_model"] for r in _rows(REFERENCE / "gpus.csv")[1]}
    header, rows = _rows(path)
    named_otherwise = [c for c in header if c != "gpu_model"
                       and (values := {r[c] for r in rows if r[c]}) and values <= catalog]
    assert named_otherwise == []


def test_public_columns_use_the_one_name():
    marts = yaml.safe_load((ROOT / "sql" / "models" / "marts" / "schema.yml").read_text(encoding="utf-8"))
    found = {(m["name"], c["name"]) for m in marts["models"] for c in m.get("columns") or [] if c["name"] in RETIRED}
    assert found == set()
