"""Autoscaling a ModelDeployment: the scale subresource HPA and KEDA need, and the
example KEDA ScaledObject, validated against KEDA's CRD."""

from pathlib import Path

import yaml

from modelplane_cli.schema import ManifestValidator

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "autoscaling" / "scaledobject.yaml"


def _deployments() -> dict[tuple[str, str], dict[str, object]]:
    found: dict[tuple[str, str], dict[str, object]] = {}
    for path in sorted((ROOT / "examples").rglob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if isinstance(doc, dict) and doc.get("kind") == "ModelDeployment":
                meta = doc["metadata"]
                found[(meta["namespace"], meta["name"])] = doc
    return found


def test_the_example_scaled_object_is_valid_for_keda(
    manifest_validator: ManifestValidator,
) -> None:
    (scaled,) = list(yaml.safe_load_all(EXAMPLE.read_text()))
    schema = manifest_validator.registry.get(scaled["apiVersion"], scaled["kind"])
    assert schema is not None, "the KEDA ScaledObject CRD is among the reference CRDs"
    _, problems = schema.admit(scaled)
    assert [str(p) for p in problems] == []


def test_a_scaled_object_that_breaks_keda_s_rules_is_refused(
    manifest_validator: ManifestValidator,
) -> None:
    """The validator applies the CRD's own rules: the test above could fail."""
    (scaled,) = list(yaml.safe_load_all(EXAMPLE.read_text()))
    scaled["spec"]["minReplicaCount"] = 9
    del scaled["spec"]["triggers"]
    schema = manifest_validator.registry.get(scaled["apiVersion"], scaled["kind"])
    assert schema is not None
    _, problems = schema.admit(scaled)
    messages = [str(p) for p in problems]
    assert any("spec.triggers: Required value" in m for m in messages), messages


def test_the_scaled_object_targets_an_example_model_deployment() -> None:
    (scaled,) = list(yaml.safe_load_all(EXAMPLE.read_text()))
    target = scaled["spec"]["scaleTargetRef"]
    assert (target["apiVersion"], target["kind"]) == ("modelplane.ai/v1alpha1", "ModelDeployment")
    assert (scaled["metadata"]["namespace"], target["name"]) in _deployments()
    # KEDA scales through the scale subresource, which needs a label selector.
    xrd = yaml.safe_load((ROOT / "apis" / "modeldeployments" / "definition.yaml").read_text())
    scale = xrd["spec"]["versions"][0]["subresources"]["scale"]
    assert scale["labelSelectorPath"] == ".status.selector"
