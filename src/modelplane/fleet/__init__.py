"""The platform side of the fleet: InferenceClass validation and cluster pool views."""
