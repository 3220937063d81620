"""compose-model-cache: a model's weights, downloaded once per cluster."""
