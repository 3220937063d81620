"""A generated model turned back into what its author wrote.

A tenant's pod template or a platform's pool is carried onward as given: only the
fields that were set (a default the schema fills in is the API server's to add, and
adding it here would show as a change the author never made), under their API names,
as JSON values.
"""

from typing import Any

from pydantic import BaseModel


def as_written(model: BaseModel) -> dict[str, Any]:
    """`model` as its author wrote it: only the fields set, under their API names."""
    return model.model_dump(mode="json", exclude_unset=True, by_alias=True, warnings=False)
