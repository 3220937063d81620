"""`modelplane render`: preview what Crossplane will do with a fleet's YAML.

Exit status: 0 when the world converged with no failed reconcile and every
input was admitted; 1 otherwise; 2 on a usage error (argparse's own).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path
from typing import TextIO

from crossplane.function import logging as function_logging

from modelplane_cli.render import output, summary
from modelplane_cli.render.admission import SchemaAdmission
from modelplane_cli.render.apis import ApiError, Apis, default_apis_dir
from modelplane_cli.render.engine import DEFAULT_ROUNDS, render
from modelplane_cli.render.loader import InputError, read_documents
from modelplane_cli.render.runners import FunctionRegistry
from modelplane_cli.schema import DefinitionError

EXIT_OK = 0
EXIT_FAILED = 1
FORMATS = ("summary", "yaml", "json")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "render",
        help="render composites through their functions until the world converges",
        description=(
            "Read YAML files or directories (recursively; '-' or nothing for standard input). "
            "Documents whose kind has a Composition are composites; everything else is "
            "existing state. Every composite's pipeline runs, round after round, until "
            "nothing changes. Output of -o yaml can be edited and rendered again."
        ),
    )
    parser.add_argument("paths", nargs="*", metavar="PATH", help="YAML/JSON file or directory")
    parser.add_argument(
        "-o", "--output", choices=FORMATS, default="summary", help="output format (summary)"
    )
    parser.add_argument(
        "--rounds",
        type=_positive_int,
        default=DEFAULT_ROUNDS,
        metavar="N",
        help=f"give up when the world has not converged after N rounds ({DEFAULT_ROUNDS})",
    )
    parser.add_argument(
        "--in-process",
        action="store_true",
        help="call functions directly instead of over loopback gRPC",
    )
    parser.add_argument(
        "--apis",
        type=Path,
        metavar="DIR",
        help="directory of XRDs and Compositions (default: the repository's apis/)",
    )
    parser.set_defaults(func=run)


def run(
    args: argparse.Namespace,
    *,
    registry: FunctionRegistry | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """Render `args.paths`; functions come from `registry` (default: installed entry points)."""
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    # Functions log through structlog, which prints to stdout unless told otherwise;
    # stdout carries the rendered YAML, so function logs are dropped.
    function_logging.configure(function_logging.Level.DISABLED)
    apis_dir: Path = args.apis or default_apis_dir()
    try:
        apis = Apis.load(apis_dir)
        documents = read_documents(args.paths)
        admission = SchemaAdmission.from_files(apis.definition_files)
    except (ApiError, InputError, DefinitionError) as exc:
        print(f"error: {exc}", file=err)
        return EXIT_FAILED
    # Anything a function prints must not end up in the YAML on stdout.
    with contextlib.redirect_stdout(err):
        result = render(
            documents,
            apis,
            registry or FunctionRegistry(),
            admission,
            in_process=args.in_process,
            max_rounds=args.rounds,
        )
    if args.output == "yaml":
        out.write(output.to_yaml(result))
    elif args.output == "json":
        out.write(output.to_json(result))
    else:
        kinds = sorted({c.composite_kind for c in apis.compositions})
        out.write(summary.summarize(result, kinds))
    for message in result.errors:
        print(f"error: {message}", file=err)
    return EXIT_OK if result.ok else EXIT_FAILED


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value
