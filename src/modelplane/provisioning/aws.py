"""Shapes every upjet AWS managed resource shares: group versions, the namespaced
reference to another composed resource, and the body with its ProviderConfig."""

import json
from typing import Any, Final

from modelplane.provisioning.model import Manifest

EC2: Final = "ec2.aws.m.upbound.io/v1beta1"
IAM: Final = "iam.aws.m.upbound.io/v1beta1"
EKS: Final = "eks.aws.m.upbound.io/v1beta1"
MANAGED_BY_TAG: Final = "modelplane.ai/cluster"


def ref(name: str) -> dict[str, str]:
    """A `...Ref` to a managed resource composed beside it (same namespace)."""
    return {"name": name}


def body(
    api_version: str,
    kind: str,
    name: str,
    namespace: str,
    provider_config: dict[str, str],
    for_provider: dict[str, Any],
    **spec: Any,
) -> Manifest:
    return {
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "forProvider": for_provider,
            "providerConfigRef": dict(provider_config),
            **spec,
        },
    }


def policy_document(*statements: dict[str, Any]) -> str:
    """An IAM policy document, as the JSON string the providers take."""
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)}, sort_keys=True)


def trust_policy(service: str, *actions: str) -> str:
    """An IAM assume-role policy letting an AWS service take the role."""
    statement = {
        "Effect": "Allow",
        "Principal": {"Service": service},
        "Action": list(actions) if actions else "sts:AssumeRole",
    }
    return json.dumps({"Version": "2012-10-17", "Statement": [statement]}, sort_keys=True)
