"""compose-model-service's tests: one package, so that its modules share `objects`.

Named after the function: under pytest's importlib import mode a package called
`tests` would clash with the repository's own test tree.
"""
