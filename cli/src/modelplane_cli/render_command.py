"""`modelplane render`: preview what Crossplane will do with a fleet's YAML.

Exit status: 1 when an input is rejected, a reconcile fails, the world does not
converge, or (by `--fail-on`) a composed manifest is refused, a composite ends
with an error condition, or a Warning is raised; 0 otherwise; 2 on a usage
error (argparse's own).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import sys
from collections.abc import Callable, Generator
from pathlib import Path
from typing import TextIO

from crossplane.function import logging as function_logging

from modelplane_cli.render import (
    diff,
    gate,
    html,
    output,
    progress,
    prune,
    summary,
    trace,
)
from modelplane_cli.render.admission import SchemaAdmission
from modelplane_cli.render.apis import ApiError, Apis, default_apis_dir
from modelplane_cli.render.apiservers import WorkloadApiServers
from modelplane_cli.render.clock import parse_now
from modelplane_cli.render.engine import DEFAULT_ROUNDS, render
from modelplane_cli.render.failures import ERROR, LEVELS
from modelplane_cli.render.faults import FAULT_ROUNDS, Faults, faults_note
from modelplane_cli.render.loader import Document, InputError, read_documents
from modelplane_cli.render.result import RenderResult
from modelplane_cli.render.runners import FunctionRegistry
from modelplane_cli.render.timeline import listing
from modelplane_cli.render.world import ObjectKey
from modelplane_cli.schema import DefinitionError
from modelplane_cli.schema.upstream import STANDIN_DIRECTORY, reference_crd_directory

EXIT_OK = 0
EXIT_FAILED = 1
FORMATS = ("summary", "yaml", "json", "diff", "html")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "render",
        help="render composites through their functions until the world converges",
        description=(
            "Read YAML files or directories (recursively, skipping hidden ones; '-' or "
            "nothing for standard input). Documents whose kind has a Composition are "
            "composites; everything else is existing state. Every composite's pipeline "
            "runs, round after round, until nothing changes. Output of -o yaml is a "
            "running world: give it with --observed (or as a PATH) and your sources are "
            "applied over it."
        ),
    )
    parser.add_argument("paths", nargs="*", metavar="PATH", help="YAML/JSON file or directory")
    parser.add_argument(
        "--observed",
        action="append",
        default=[],
        metavar="WORLD",
        help="the running world (a previous -o yaml, or a cluster export); PATH documents "
        "replace its objects of the same identity (repeatable)",
    )
    pruning = parser.add_mutually_exclusive_group()
    pruning.add_argument(
        "--no-prune",
        action="store_true",
        help="with a running world, keep its composites that no source holds (default: "
        "deleted with all they composed, as a GitOps sync with pruning does)",
    )
    pruning.add_argument(
        "--allow-prune",
        action="store_true",
        help="delete them as by default, but as intended: each is a note, not an error, "
        "and every other check still fails the render",
    )
    parser.add_argument(
        "-o", "--output", choices=FORMATS, default="summary", help="output format (summary)"
    )
    parser.add_argument(
        "--fail-on",
        choices=LEVELS,
        default=ERROR,
        help="exit 1 on errors (default: rejected manifests, error conditions), on "
        "warnings too, or never (rejected input, fatal results and no convergence "
        "always fail)",
    )
    parser.add_argument(
        "--crds",
        action="append",
        type=Path,
        metavar="PATH",
        help="CRD files or directories (e.g. kubectl get crds -o yaml) to validate composed "
        "custom resources against (repeatable; default: the upstream CRDs beside the "
        "checkout, when present)",
    )
    parser.add_argument(
        "--concurrent",
        action="store_true",
        help="every composite of a round sees the same snapshot, as parallel reconcilers do",
    )
    parser.add_argument(
        "--now",
        type=_now,
        metavar="TIME",
        help="the time every function takes as now, RFC 3339 (default: the latest time the "
        "input records; see docs/guides/capacity-drain-failover.md)",
    )
    parser.add_argument(
        "--watches",
        action="store_true",
        help="price the render's time with provider-kubernetes watches on (--enable-watches "
        "and spec.watch: true) rather than its default polling",
    )
    parser.add_argument(
        "--timeline",
        action="store_true",
        help="list when each composite reaches each state on a control plane (in the summary; "
        "on standard error with other outputs)",
    )
    parser.add_argument(
        "--trace",
        action="append",
        default=[],
        metavar="DEPLOYMENT",
        help="print this ModelDeployment's whole match trace, one line per rejected cluster "
        "(NAME or NAMESPACE/NAME; repeatable): status lists only the first 10 clusters of a "
        "row and 50 rows. In the summary; on standard error with other outputs",
    )
    parser.add_argument(
        "--rounds",
        type=_at_least(1),
        default=DEFAULT_ROUNDS,
        metavar="N",
        help=f"give up when the world has not converged after N rounds ({DEFAULT_ROUNDS})",
    )
    parser.add_argument(
        "--faults",
        type=_at_least(0),
        metavar="SEED",
        help=f"inject the failures a control plane has (refused and timed-out applies, "
        f"Synced=False, unreachable clusters, failed function calls, missing required "
        f"resources) in the first {FAULT_ROUNDS} rounds, drawn from SEED, and fail when a "
        "round breaks an invariant; --rounds counts the fault-free rounds after them "
        "(see docs/cli.md)",
    )
    parser.add_argument(
        "--in-process",
        action="store_true",
        help="call functions directly instead of over loopback gRPC",
    )
    parser.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="no progress line on standard error (shown on a terminal after two seconds)",
    )
    parser.add_argument(
        "--apis",
        type=Path,
        metavar="DIR",
        help="directory of XRDs and Compositions (default: the ones this CLI ships)",
    )
    parser.set_defaults(func=run)


def run(
    args: argparse.Namespace,
    *,
    registry: FunctionRegistry | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
    stdin: TextIO | None = None,
) -> int:
    """Render `args.paths`; functions come from `registry` (default: installed entry points)."""
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    # Functions log through structlog, which prints to stdout unless told otherwise;
    # stdout carries the rendered YAML, so function logs are dropped.
    function_logging.configure(function_logging.Level.DISABLED)
    apis_dir: Path = args.apis or default_apis_dir()
    crds = _crd_paths(args.crds)
    try:
        apis = Apis.load(apis_dir)
        documents = _documents(args, stdin)
        admission = SchemaAdmission.from_files(apis.definition_files)
    except (ApiError, InputError, DefinitionError) as exc:
        for line in str(exc).splitlines():
            print(f"error: {line}", file=err)
        return EXIT_FAILED
    empty = _no_composite(args, documents, apis)
    if empty is not None:
        print(f"error: {empty}", file=err)
        return EXIT_FAILED
    try:
        traced = trace.resolve(args.trace, documents, apis)
    except trace.TraceError as exc:
        for line in str(exc).splitlines():
            print(f"error: {line}", file=err)
        return EXIT_FAILED
    pruned: list[prune.Pruned] = []
    left_behind: frozenset[ObjectKey] = frozenset()
    uncompared: list[str] = []
    if not args.no_prune:
        sync = prune.Sync(documents, apis)
        uncompared = [*sync.uncompared(), *sync.unheld_targets()]
        left_behind = sync.left_behind()
        documents, pruned = sync.prune()
    missing = [str(p) for p in crds or [] if not p.exists()]
    if missing:
        print(f"error: --crds {', '.join(missing)}: no such file or directory", file=err)
        return EXIT_FAILED
    # Anything a function prints must not end up in the YAML on stdout.
    servers = WorkloadApiServers(crds)
    composites = sum(
        apis.is_composite(d.key.api_version, d.key.kind) and not d.deleted for d in documents
    )
    shown = progress.Progress(err, f"rendering {composites} composites", quiet=args.quiet)
    with shown, contextlib.redirect_stdout(err), _collector_relaxed():
        try:
            result = render(
                documents,
                apis,
                registry or FunctionRegistry(),
                admission,
                in_process=args.in_process,
                max_rounds=args.rounds,
                servers=servers,
                concurrent=args.concurrent,
                now=args.now,
                watches=args.watches,
                traced=traced,
                faults=None if args.faults is None else Faults(args.faults),
            )
        except DefinitionError as exc:
            print(f"error: --crds: {exc}", file=err)
            return EXIT_FAILED
    kinds = sorted({c.composite_kind for c in apis.compositions})
    _write(args, result, kinds, traced, out, err)
    if result.unchecked_kinds:
        print(
            "note: composed manifests of these kinds were not validated (no CRDs; pass "
            f"--crds): {', '.join(result.unchecked_kinds)}",
            file=err,
        )
    if args.faults is not None:
        print(f"note: {faults_note(args.faults, result.faults)}", file=err)
    for line in (*result.input_notes, *uncompared):
        print(f"note: {line}", file=err)
    accepted, unwanted = gate.pruned(pruned, result, allow=args.allow_prune)
    for line in accepted:
        print(f"note: {line}", file=err)
    sources = gate.sources(documents, apis)
    problems = gate.problems(args.fail_on, result, kinds, sources, servers, unwanted, left_behind)
    for message in problems:
        print(f"error: {message}", file=err)
    return EXIT_FAILED if problems else EXIT_OK


def _write(
    args: argparse.Namespace,
    result: RenderResult,
    kinds: list[str],
    traced: list[str],
    out: TextIO,
    err: TextIO,
) -> None:
    """The output asked for on `out`; what goes beside it (`--trace`, `--timeline`)
    ends a summary, and goes to `err` beside other formats, so they stay parseable."""
    if args.output == "yaml":
        out.write(output.to_yaml(result))
    elif args.output == "json":
        out.write(output.to_json(result))
    elif args.output == "diff":
        out.write(diff.diff(result))
    elif args.output == "html":
        out.write(html.to_html(result))
    else:
        out.write(summary.summarize(result, kinds, with_timeline=args.timeline))
    if traced:
        every = trace.every_cluster(result.objects, traced, summary.table)
        if args.output == "summary":
            out.write(f"\n{every}\n")  # one more section of the summary
        else:
            print(every, file=err)
    if args.timeline and args.output != "summary":
        print(listing(result.timeline, summary.table), file=err)


def _documents(args: argparse.Namespace, stdin: TextIO | None) -> list[Document]:
    """The observed world (`--observed`) and the sources, both read before failing."""
    problems: list[str] = []
    documents: list[Document] = []
    readings: list[tuple[list[str], bool | None]] = []
    if args.observed:
        readings.append((list(args.observed), True))
        if args.paths:
            readings.append((list(args.paths), False))
    else:
        readings.append((list(args.paths), None))
    for paths, observed in readings:
        try:
            documents.extend(read_documents(paths, stdin, observed=observed))
        except InputError as exc:
            problems.extend(exc.problems)
    if problems:
        raise InputError(problems)
    return documents


def _no_composite(args: argparse.Namespace, documents: list[Document], apis: Apis) -> str | None:
    """Why the input renders nothing, if it holds no composite: a path typo in CI."""

    def composites(docs: list[Document]) -> bool:
        # A document of the APIs' groups that no XRD serves is meant as one, and is
        # reported as such.
        return any(d.key.group in apis.groups for d in docs)

    named = " ".join(args.paths) or "standard input"
    if not composites(documents):
        return f"{named}: no composite in the input (nothing to render)"
    if args.observed and args.paths and not composites([d for d in documents if not d.observed]):
        return f"{named}: no composite among the sources (nothing to apply over --observed)"
    return None


def _crd_paths(given: list[Path] | None) -> list[Path] | None:
    if given:
        return given
    reference = reference_crd_directory()
    # The stand-ins first: an upstream CRD of the same kind replaces its stand-in.
    return [STANDIN_DIRECTORY, reference] if reference is not None else None


def _at_least(least: int) -> Callable[[str], int]:
    """An argparse type: a whole number no smaller than `least`."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < least:
            raise argparse.ArgumentTypeError(f"must be at least {least}")
        return value

    return parse


def _now(text: str) -> str:
    try:
        return parse_now(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


@contextlib.contextmanager
def _collector_relaxed() -> Generator[None]:
    """CPython's cyclic collector, off while a render works. A render keeps nearly all
    it builds to the end and reference counting frees what its calls drop, so a
    collection finds almost nothing (about 21,000 objects in cycles at 100 x 50) but
    walks every object kept since the last one: about 0.2 s of a 100 x 50 render, and as
    much again after it if its objects were left young. `freeze` then `unfreeze` moves
    them to the oldest generation unwalked, where only a full collection looks at them
    (and frees the cycles the render left)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.unfreeze()
        if enabled:
            gc.enable()
