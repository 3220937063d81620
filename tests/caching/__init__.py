"""Tests of the model cache core."""
