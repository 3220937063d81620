"""compose-model-service: a ModelService's routes on its InferenceGateway's hub cluster."""
