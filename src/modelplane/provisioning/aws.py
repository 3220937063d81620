"""What every upjet AWS managed resource shares: its group versions, the tag that
names its cluster, and IAM policy documents."""

import json
from typing import Any, Final

EC2: Final = "ec2.aws.m.upbound.io/v1beta1"
IAM: Final = "iam.aws.m.upbound.io/v1beta1"
EKS: Final = "eks.aws.m.upbound.io/v1beta1"
MANAGED_BY_TAG: Final = "modelplane.ai/cluster"


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
