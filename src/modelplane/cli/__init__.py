"""The `modelplane` command line."""
