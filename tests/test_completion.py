"""`modelplane completion bash|zsh|fish`: scripts generated from the parser, that complete."""

from __future__ import annotations

import contextlib
import io
import shutil
import subprocess
from pathlib import Path

import pytest

from modelplane_cli.main import main


def _script(shell: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["completion", shell]) == 0
    return out.getvalue()


def _complete(script: Path, *words: str) -> list[str]:
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("needs bash")
    array = " ".join(f"'{w}'" for w in words)
    done = subprocess.run(
        [
            bash,
            "-c",
            f"source {script}; COMP_WORDS=({array}); COMP_CWORD={len(words) - 1}; "
            '_modelplane; printf "%s\\n" "${COMPREPLY[@]}"',
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return [line for line in done.stdout.splitlines() if line]


@pytest.mark.parametrize(
    ("words", "expected"),
    [
        (("modelplane", "re"), ["render"]),
        (("modelplane", ""), ["bench", "cel", "completion", "render"]),
        (("modelplane", "render", "-o", ""), ["summary", "yaml", "json", "diff", "html"]),
        (("modelplane", "render", "x/", "--fail-on", "w"), ["warning"]),
        (("modelplane", "render", "--observed", "w.yaml", "--no"), ["--no-prune", "--now"]),
        (("modelplane", "cel", "eval", "--device-n"), ["--device-name"]),
        (("modelplane", "completion", ""), ["bash", "zsh", "fish"]),
        # A path: nothing offered, so the shell completes file names.
        (("modelplane", "render", "--observed", ""), []),
    ],
)
def test_bash_completes_commands_options_and_choices(
    tmp_path: Path, words: tuple[str, ...], expected: list[str]
) -> None:
    script = tmp_path / "modelplane.bash"
    script.write_text(_script("bash"))

    assert _complete(script, *words) == expected


def test_zsh_runs_the_bash_script_through_bashcompinit() -> None:
    zsh = _script("zsh")

    assert zsh.startswith("#compdef modelplane\nautoload -U +X bashcompinit && bashcompinit\n")
    assert zsh.endswith(_script("bash"))


def test_fish_names_every_command_and_choice() -> None:
    fish = _script("fish")

    for command in ("render", "cel", "bench", "completion"):
        assert f"-n __fish_use_subcommand -a {command} " in fish
    assert (
        "complete -c modelplane -n '__fish_seen_subcommand_from render' -s o "
        "-x -a 'summary yaml json diff html'"
    ) in fish
    checker = shutil.which("fish")
    if checker is not None:
        subprocess.run([checker, "--no-execute", "-c", fish], check=True, timeout=60)
