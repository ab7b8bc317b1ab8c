"""Every deployment's entrypoint loads the way a Prefect worker loads it, and names a flow that takes its parameters."""
import inspect

import pytest
import yaml
from prefect import Flow
from prefect.flows import load_flow_from_entrypoint

from provider_eval.paths import PROJECT_ROOT

DEPLOYMENTS = yaml.safe_load((PROJECT_ROOT / "deployments" / "prefect.yaml").read_text(encoding="utf-8"))["deployments"]


def test_every_deployment_is_listed():
    assert {d["name"] for d in DEPLOYMENTS} == {"refresh-pricing", "validate-host"}


@pytest.mark.parametrize("deployment", DEPLOYMENTS, ids=[d["name"] for d in DEPLOYMENTS])
def test_entrypoint_loads_a_flow_with_its_parameters(deployment, monkeypatch):
    monkeypatch.chdir(PROJECT_ROOT)  # entrypoints are relative to the checkout, where the worker runs them
    path, name = deployment["entrypoint"].split(":")
    assert (PROJECT_ROOT / path).is_file(), deployment["entrypoint"]
    flow = load_flow_from_entrypoint(deployment["entrypoint"])
    assert isinstance(flow, Flow) and flow.fn.__name__ == name
    accepted = inspect.signature(flow.fn).parameters
    assert set(deployment.get("parameters") or {}) <= set(accepted), deployment["name"]
