"""compose-model-cache's tests, as a package named after the function (importlib mode)."""
