"""`modelplane cel eval`: evaluate CEL the way a Kubernetes DRA selector sees it.

Results are JSON objects, one per expression: {"result": value}, with "type"
added for values JSON cannot carry as themselves (quantity, semver, bytes,
non-finite doubles, timestamps, durations), or {"error": kind,
"message": text} where kind is "compile", "runtime", or "input" for a line or
device that is not valid input. --kubernetes-version picks the selector
environment and whether devices may carry list-typed attributes, as
modelplane.cel's kubernetes_version arguments do.
"""

from __future__ import annotations

import argparse
import base64
import json
import math
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any, Final

from modelplane.cel import (
    CelCompileError,
    CelRuntimeError,
    Device,
    Duration,
    Quantity,
    Semver,
    Timestamp,
    device_from_spec,
    evaluate,
)
from modelplane.cel.versions import parse_version
from modelplane.core.vocabulary import INFERENCE_CLASS
from modelplane_cli import yamlio

EXIT_OK: Final = 0
EXIT_ERROR: Final = 1
EXIT_USAGE: Final = 2


class InputError(ValueError):
    """A device or a JSON line that cannot be used."""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    cel = subparsers.add_parser(
        "cel",
        help="evaluate CEL with the Kubernetes libraries Modelplane supports",
        description="Evaluate CEL expressions with the Kubernetes DRA selector environment.",
    )
    cel.set_defaults(func=lambda _args: _usage(cel, "a subcommand is required"))
    commands = cel.add_subparsers(dest="cel_command", metavar="SUBCOMMAND")
    run = commands.add_parser(
        "eval",
        help="evaluate one expression, or JSON lines from stdin",
        description=(
            "Evaluate EXPR and print a JSON object. With --device the expression is a "
            "DRA device selector and must yield a bool. With --jsonl, read "
            '{"expr": ..., "device": {...}} objects from stdin, one per line, and print '
            "one result object per line; --device then supplies the device for lines "
            "that have none."
        ),
    )
    run.add_argument("expr", nargs="?", metavar="EXPR", help="the CEL expression")
    run.add_argument(
        "--device",
        type=Path,
        metavar="FILE",
        help="a JSON or YAML device to evaluate the selector against: one device of an "
        "InferenceClass, or a whole InferenceClass (see --device-name)",
    )
    run.add_argument(
        "--device-name",
        metavar="NAME",
        help="with --device naming an InferenceClass: which of its devices (required when it "
        "has more than one)",
    )
    run.add_argument("--jsonl", action="store_true", help="read JSON lines from stdin")
    run.add_argument(
        "--kubernetes-version",
        metavar="VERSION",
        help=(
            "the cluster's Kubernetes version (e.g. 1.36): selectors are checked as its API "
            "server checks new ones, and devices may carry list-typed attributes from 1.36; "
            "without it, selectors are checked as stored ones and devices have no lists"
        ),
    )
    run.set_defaults(func=lambda args: run_eval(args, sys.stdin, sys.stdout, sys.stderr))


def _usage(parser: argparse.ArgumentParser, message: str) -> int:
    parser.print_usage(sys.stderr)
    print(f"{parser.prog}: error: {message}", file=sys.stderr)
    return EXIT_USAGE


def run_eval(args: argparse.Namespace, stdin: IO[str], stdout: IO[str], stderr: IO[str]) -> int:
    """The `cel eval` handler; streams are parameters so tests can run it in process."""
    expression: str | None = args.expr
    if args.jsonl == (expression is not None):
        problem = "EXPR and --jsonl exclude each other" if args.jsonl else "EXPR is required"
        print(f"modelplane cel eval: error: {problem}", file=stderr)
        return EXIT_USAGE
    version: str | None = args.kubernetes_version
    device: Device | None = None
    try:
        if version is not None:
            parse_version(version)
        if args.device_name is not None and args.device is None:
            raise InputError("--device-name needs --device")
        if args.device is not None:
            device = _load_device(args.device, version, args.device_name)
    except (InputError, ValueError) as error:
        print(f"modelplane cel eval: error: {error}", file=stderr)
        return EXIT_USAGE
    if expression is not None:
        result = evaluate_to_json(expression, device, version)
        _write(stdout, result)
        return EXIT_ERROR if "error" in result else EXIT_OK
    for line in stdin:
        _write(stdout, _evaluate_line(line, device, version))
        stdout.flush()
    return EXIT_OK


def _write(stdout: IO[str], result: Mapping[str, Any]) -> None:
    stdout.write(json.dumps(result, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n")


def _load_device(path: Path, version: str | None, name: str | None = None) -> Device:
    try:
        document = yamlio.load_one(path.read_text(encoding="utf-8"), str(path))
    except (OSError, UnicodeDecodeError, yamlio.YAMLError) as error:
        raise InputError(f"cannot read device file {path}: {error}") from None
    except RecursionError:
        raise InputError(f"cannot read device file {path}: nested too deeply") from None
    where = f"device file {path}"
    if isinstance(document, Mapping) and document.get("kind") == INFERENCE_CLASS:
        return _device(*_class_device(document, name, where), version)  # pyright: ignore[reportUnknownArgumentType]
    if name is not None and isinstance(document, Mapping) and document.get("name") != name:  # pyright: ignore[reportUnknownMemberType]
        raise InputError(f"{where}: the device is not named {name!r}")
    return _device(document, where, version)


def _class_device(document: Mapping[str, Any], name: str | None, where: str) -> tuple[Any, str]:
    """The device of an InferenceClass `--device-name` picks (its only one by default)."""
    devices: Any = (document.get("spec") or {}).get("devices")
    if not isinstance(devices, list) or not devices:
        raise InputError(f"{where}: the InferenceClass has no spec.devices")
    entries: list[Any] = devices  # pyright: ignore[reportUnknownVariableType]
    names = [str(d.get("name")) for d in entries if isinstance(d, Mapping)]  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
    if name is None:
        if len(entries) == 1:
            return entries[0], f"{where}: spec.devices[0]"
        raise InputError(
            f"{where}: the InferenceClass has {len(entries)} devices; pick one with "
            f"--device-name ({', '.join(names)})"
        )
    if name not in names:
        raise InputError(f"{where}: the InferenceClass has no device {name!r} ({', '.join(names)})")
    index = names.index(name)
    return entries[index], f"{where}: spec.devices[{index}]"


def _device(document: Any, where: str, version: str | None) -> Device:
    if not isinstance(document, Mapping):
        raise InputError(f"{where}: must be a device object")
    try:
        return device_from_spec(document, version)  # pyright: ignore[reportUnknownArgumentType]
    except ValueError as error:
        raise InputError(f"{where}: {error}") from None


def _evaluate_line(line: str, default_device: Device | None, version: str | None) -> dict[str, Any]:
    try:
        request = json.loads(line)
        if not isinstance(request, dict):
            raise InputError("each line must be a JSON object")
        entry: dict[str, Any] = request  # pyright: ignore[reportUnknownVariableType]
        expression = entry.get("expr")
        if not isinstance(expression, str):
            raise InputError('"expr" must be a string')
        device = default_device
        if entry.get("device") is not None:
            device = _device(entry["device"], "device", version)
    except (json.JSONDecodeError, InputError) as error:
        return {"error": "input", "message": str(error)}
    except RecursionError:
        # The decoder recurses per nesting level; one hostile line must not end the batch.
        return {"error": "input", "message": "the line is nested too deeply to decode"}
    return evaluate_to_json(expression, device, version)


def evaluate_to_json(
    expression: str, device: Device | None, version: str | None = None
) -> dict[str, Any]:
    try:
        value = evaluate(expression, device, kubernetes_version=version)
    except CelCompileError as error:
        return {"error": "compile", "message": str(error)}
    except CelRuntimeError as error:
        return {"error": "runtime", "message": str(error)}
    return _result(value)


def _result(value: Any) -> dict[str, Any]:
    typed = _typed(value)
    if typed is not None:
        return {"result": typed[0], "type": typed[1]}
    return {"result": _plain(value)}


def _typed(value: Any) -> tuple[str, str] | None:
    if isinstance(value, Quantity):
        return str(value), "quantity"
    if isinstance(value, Semver):
        return str(value), "semver"
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii"), "bytes"
    if isinstance(value, float) and not math.isfinite(value):
        return ("NaN" if math.isnan(value) else "+Inf" if value > 0 else "-Inf"), "double"
    if isinstance(value, Timestamp):
        return str(value), "timestamp"
    if isinstance(value, Duration):
        return str(value), "duration"
    return None


def _plain(value: Any) -> Any:
    """JSON for containers; values with a type tag nest as their string form."""
    if isinstance(value, list):
        items: list[Any] = value  # pyright: ignore[reportUnknownVariableType]
        return [_plain(item) for item in items]
    if isinstance(value, dict):
        entries: dict[Any, Any] = value  # pyright: ignore[reportUnknownVariableType]
        return {_key(k): _plain(v) for k, v in entries.items()}
    typed = _typed(value)
    return value if typed is None else typed[0]


def _key(key: Any) -> str:
    if isinstance(key, bool):
        return "true" if key else "false"
    return str(key)
