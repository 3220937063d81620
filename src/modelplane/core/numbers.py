"""JSON numbers as Kubernetes reads them: an integral double is an integer.

Crossplane hands a function every object as a protobuf Struct, which stores every
number as a double, so `replicas: 3` arrives as 3.0. The API server validated it
as an integer, and an integral double is one; a boolean never is. The generated
models are strict (no bool, string or float is coerced into an int), so an object
is read into one only after its integral doubles are turned back into ints.
"""

from typing import Any, cast


def restore_ints(value: Any) -> Any:
    """`value` with every integral float (at any depth) an int; booleans stay booleans."""
    if type(value) is float and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {key: restore_ints(item) for key, item in cast(dict[str, Any], value).items()}
    if isinstance(value, list):
        return [restore_ints(item) for item in cast(list[Any], value)]
    return value
