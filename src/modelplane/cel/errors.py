"""The exceptions the CEL evaluator raises."""


class CelError(Exception):
    """Base of every error the CEL evaluator raises."""


class CelCompileError(CelError):
    """The expression is rejected before evaluation.

    Syntax errors, type errors a Kubernetes type checker would report, unknown
    functions or fields, and expressions over the length or nesting limits.
    """


class CelRuntimeError(CelError):
    """Evaluation failed.

    A missing key, an invalid quantity or version, an overflow, an exhausted
    cost or time budget, or a selector whose result is not a bool.
    """


class CelBudgetExhaustedError(CelRuntimeError):
    """A cost budget shared by several evaluations ran out.

    `expression` is the one whose evaluation exhausted it (the same for every
    evaluation refused afterwards); `limit` the shared budget's units.
    """

    def __init__(self, message: str, expression: str, limit: int) -> None:
        super().__init__(message)
        self.expression = expression
        self.limit = limit
