"""compose-model-deployment: the fleet scheduler's Crossplane glue."""
