"""Shared Crossplane glue: the only part of the core library that imports the SDK.

Functions use this so that every one of them resolves requirements, reports
conditions and events, wraps remote objects and survives its own bugs the same way.
"""
