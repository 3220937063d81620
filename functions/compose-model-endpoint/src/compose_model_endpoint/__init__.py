"""compose-model-endpoint: validates and reports a ModelEndpoint."""
