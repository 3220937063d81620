"""The line every bench prints for an issue's figure against its goal."""


def line(what: str, value: str, limit: str, met: bool) -> str:
    """`goal: <what> <value> (goal <limit>): met` or `... NOT met`."""
    return f"goal: {what} {value} (goal {limit}): {'met' if met else 'NOT met'}"
