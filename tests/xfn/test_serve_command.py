"""A function's command names its runner; workers and the server import it by name."""

import pickle

import pytest

from modelplane.xfn.runner import ComposeFunction
from modelplane.xfn.serve import Imported


def test_a_named_runner_is_imported_when_called_and_survives_pickling() -> None:
    named = Imported("compose_model_deployment.fn:FunctionRunner")
    # Spawned workers get the name pickled, not the class.
    assert pickle.loads(pickle.dumps(named)) == named
    runner = named()
    assert isinstance(runner, ComposeFunction)
    assert type(runner).__module__ == "compose_model_deployment.fn"


def test_a_name_that_is_no_compose_function_is_refused() -> None:
    with pytest.raises(TypeError, match="collections:OrderedDict is not a ComposeFunction"):
        Imported("collections:OrderedDict")()
