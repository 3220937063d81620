"""compose-inference-gateway: the fleet's entry Gateway on a hub cluster."""
