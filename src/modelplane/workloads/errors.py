"""The one error the renderer raises for inputs it cannot render."""

from modelplane.core.vocabulary import Reason


class RenderError(ValueError):
    """An input the renderer cannot turn into workloads, and where it went wrong.

    `field` is the path inside the object at fault (the ModelReplica unless the
    message says otherwise), `reason` a `Reason` word the caller can put on a
    condition unchanged.
    """

    def __init__(self, field: str, message: str, reason: str = Reason.INVALID_SPEC) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.reason = reason
        self.detail = message
