"""compose-model-replica: the workload renderer's Crossplane glue."""
