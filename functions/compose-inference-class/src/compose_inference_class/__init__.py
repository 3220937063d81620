"""compose-inference-class: validates an InferenceClass beyond its schema."""
