"""compose-inference-cluster: connects a cluster and publishes its GPU pools."""
