"""Pydantic models of Modelplane's APIs, generated from apis/*/definition.yaml."""

from modelplane_models.inference_class import InferenceClass
from modelplane_models.inference_cluster import InferenceCluster
from modelplane_models.inference_gateway import InferenceGateway
from modelplane_models.model_cache import ModelCache
from modelplane_models.model_deployment import ModelDeployment
from modelplane_models.model_endpoint import ModelEndpoint
from modelplane_models.model_replica import ModelReplica
from modelplane_models.model_service import ModelService

__all__ = ["InferenceClass", "InferenceCluster", "InferenceGateway", "ModelCache", "ModelDeployment", "ModelEndpoint", "ModelReplica", "ModelService"]
