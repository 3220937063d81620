"""Errors raised while turning API objects into scheduler inputs."""


class InputError(ValueError):
    """An input object does not have the shape the scheduler needs.

    `path` is the field path inside the object (for example
    `spec.nodeSelector.devices[1].count`), so the message can point a human at
    the exact field.
    """

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message
