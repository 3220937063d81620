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
