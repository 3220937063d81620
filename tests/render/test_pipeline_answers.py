"""What a step's answer carries on: its context (none included) and its results
(one of unknown severity included), as Crossplane v2.3's composer reads them."""

from pathlib import Path

import crossplane.function.proto.v1.run_function_pb2 as fnv1

from .support import PARENT, FakeFunction, config_map, one, render_text, write_apis
from .test_pipeline import First, Second


class Forgetful(First):
    """Step 0, answering with no context at all (a function that never copied it)."""

    def compose(self, request: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        super().compose(request, rsp)
        rsp.ClearField("context")


class Seeing(Second):
    def __init__(self) -> None:
        super().__init__()
        self.had_context: list[bool] = []

    def compose(self, request: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        self.had_context.append(request.HasField("context"))
        super().compose(request, rsp)


def test_a_step_that_answers_no_context_passes_none_on(tmp_path: Path) -> None:
    # Crossplane hands the next step the context the last one returned, nil included.
    apis = write_apis(tmp_path, {"XParent": ["fn-first", "fn-second"]})
    second = Seeing()

    result = render_text(apis, PARENT, {"fn-first": Forgetful(), "fn-second": second})

    assert result.ok, result.errors
    assert second.had_context and not any(second.had_context)
    assert one(result, "ConfigMap", "second")["data"] == {"context": "none"}


class Unspecified(FakeFunction):
    def compose(self, request: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        config_map(rsp, "first", {"from": "step-0"})
        rsp.results.add(severity=fnv1.SEVERITY_UNSPECIFIED, message="from the future")
        rsp.results.add(severity=fnv1.SEVERITY_NORMAL, message="said", reason="")


def test_a_result_of_unknown_severity_is_a_warning_in_crossplane_s_words(
    tmp_path: Path,
) -> None:
    apis = write_apis(tmp_path, {"XParent": ["fn-first"]})

    result = render_text(apis, PARENT, {"fn-first": Unspecified()})

    assert result.ok, result.errors
    events = sorted(
        (e["type"], e["reason"], e["message"])
        for e in result.events
        if e["message"] in ('Pipeline step "step-0": said',) or "unknown severity" in e["message"]
    )
    assert events == [
        ("Normal", "ComposeResources", 'Pipeline step "step-0": said'),
        (
            "Warning",
            "ComposeResources",
            'Pipeline step "step-0" returned a result of unknown severity (assuming warning): '
            "from the future",
        ),
    ]
