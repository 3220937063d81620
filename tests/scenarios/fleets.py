"""Render fleets through the real APIs and functions, and edit what came out.

A scenario renders a fleet, edits the rendered world the way a user edits YAML
(scale, change a selector, add or delete a cluster), and renders the edit: the
preview `modelplane render` gives of a change to a running fleet.
"""

import copy
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from crossplane.function import logging as function_logging

from modelplane_cli.render import (
    DEFAULT_ROUNDS,
    Document,
    RenderResult,
    default_apis_dir,
    read_documents,
    render,
)

from . import cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
Obj = dict[str, Any]


class Fleet:
    """One rendered world, and how to edit and re-render it."""

    def __init__(self, renderer: "Renderer", result: RenderResult) -> None:
        self.renderer = renderer
        self.result = result

    @property
    def objects(self) -> list[Obj]:
        return self.result.objects

    def all(self, kind: str, **labels: str) -> list[Obj]:
        return [
            o
            for o in self.objects
            if o["kind"] == kind
            and all(o["metadata"].get("labels", {}).get(k) == v for k, v in labels.items())
        ]

    def manifests(self, kind: str) -> list[Obj]:
        """The manifests of `kind` that provider-kubernetes Objects put on clusters."""
        return [
            o["spec"]["forProvider"]["manifest"]
            for o in self.objects
            if o["kind"] == "Object" and o["spec"]["forProvider"]["manifest"]["kind"] == kind
        ]

    def one(self, kind: str, name: str) -> Obj:
        (found,) = [o for o in self.objects if o["kind"] == kind and o["metadata"]["name"] == name]
        return found

    def condition(self, kind: str, name: str, type_: str) -> Obj:
        conditions = self.one(kind, name).get("status", {}).get("conditions", [])
        (found,) = [c for c in conditions if c["type"] == type_]
        return found

    def placements(self, deployment: str) -> list[tuple[str, str, int]]:
        status = self.one("ModelDeployment", deployment)["status"]
        return [(p["replica"], p["cluster"], p["index"]) for p in status["placements"]]

    def edit(
        self,
        change: Callable[[list[Obj]], None],
        *,
        rounds: int | None = None,
        now: str | None = None,
    ) -> "Fleet":
        """Render again after `change` edits (a deep copy of) this world's objects;
        `rounds` stops after that many reconcile rounds, to look at a change in flight,
        and `now` fixes the render clock."""
        objects = [_copy(o) for o in self.objects if o["kind"] != "Event"]
        change(objects)
        documents = (Document("edited", o) for o in objects)
        return self.renderer.documents(documents, rounds=rounds, now=now)

    def edit_rounds(
        self, change: Callable[[list[Obj]], None], count: int, *, now: str | None = None
    ) -> list["Fleet"]:
        """`edit(change, rounds=n)` for n in 1..count: the world after each round.

        The engine stops at the round that changes nothing (`converged`), whatever
        `rounds` allows, and is deterministic: once `rounds=k` converged, every later
        n renders the same, so it is not rendered again."""
        worlds: list[Fleet] = []
        for n in range(1, count + 1):
            worlds.append(self.edit(change, rounds=n, now=now))
            if worlds[-1].result.converged:
                break
        return worlds + [worlds[-1]] * (count - len(worlds))


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def find(objects: list[Obj], kind: str, name: str) -> Obj:
    (found,) = [o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name]
    return found


def placed_clusters(objects: list[Obj]) -> dict[str, list[str]]:
    """Each ModelDeployment's placements, by the clusters they are on."""
    return {
        o["metadata"]["name"]: sorted(
            p["cluster"] for p in (o.get("status") or {}).get("placements") or []
        )
        for o in objects
        if o["kind"] == "ModelDeployment"
    }


class Renderer:
    def __init__(self) -> None:
        # As `modelplane render` does: the functions' per-call log lines (structlog,
        # to stdout) are dropped, not formatted for pytest to capture and discard.
        function_logging.configure(function_logging.Level.DISABLED)
        # What the in-process commands use too (`cli.shared_setup`).
        self.apis = cli.shared_apis(default_apis_dir())
        self.registry = cli.REGISTRY
        self.admission = cli.shared_admission(self.apis.definition_files)
        # Example sets rendered so far, by their paths: many tests read the same one.
        self._examples: dict[tuple[tuple[str, ...], bool], RenderResult] = {}

    def documents(
        self,
        documents: Iterable[Document],
        *,
        in_process: bool = True,
        rounds: int | None = None,
        now: str | None = None,
    ) -> Fleet:
        result = render(
            list(documents),
            self.apis,
            self.registry,
            self.admission,
            in_process=in_process,
            now=now,
            max_rounds=DEFAULT_ROUNDS if rounds is None else rounds,
        )
        return Fleet(self, result)

    def paths(self, *relative: str, in_process: bool = True) -> Fleet:
        """The example files at `relative`, rendered once per session (render is
        deterministic and the examples do not change); each caller gets its own copy."""
        key = (relative, in_process)
        if key not in self._examples:
            docs = read_documents([str(EXAMPLES / path) for path in relative])
            self._examples[key] = self.documents(docs, in_process=in_process).result
        return Fleet(self, copy.deepcopy(self._examples[key]))
