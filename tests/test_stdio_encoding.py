"""The command reads and writes UTF-8 whatever the locale's encoding: the same bytes
on every machine, and no encoding error on a non-ASCII annotation."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

MODELPLANE = Path(sys.executable).parent / "modelplane"
TEXT = "Zoë 東京"


@pytest.mark.parametrize("encoding", ["latin-1", "ascii", "utf-8"])
def test_the_streams_are_utf8_under_any_locale_encoding(encoding: str) -> None:
    env = {**os.environ, "PYTHONIOENCODING": encoding}
    line = json.dumps({"expr": f'"{TEXT}" + "!"'}, ensure_ascii=False) + "\n"
    run = subprocess.run(
        [str(MODELPLANE), "cel", "eval", "--jsonl"],
        input=line.encode(),
        capture_output=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert run.returncode == 0, run.stderr.decode(errors="replace")
    assert json.loads(run.stdout.decode("utf-8")) == {"result": f"{TEXT}!"}
