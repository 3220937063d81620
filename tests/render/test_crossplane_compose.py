"""The compose half of a reconcile, as Crossplane v2.3's `FunctionComposer.Compose` runs it.

Garbage collection before anything is applied, stopping at the first refused
delete; Usage-protected deletes refused as the `nousages` webhook refuses them,
ending the reconcile silently; each resource applied on its own; composed
resources tracked through `spec.crossplane.resourceRefs`; a fatal result
stopping before garbage collection. The apply of each resource and of the
composite's status is in `test_crossplane_apply`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import crossplane.function.proto.v1.run_function_pb2 as fnv1
import pytest
from crossplane.function import resource, response

from modelplane.core.vocabulary import LABEL_COMPOSITE
from modelplane_cli.render import output, parse_stream
from modelplane_cli.render.protection import USAGE_TYPES, refusal, usages_of
from modelplane_cli.render.summary import summarize
from modelplane_cli.render.world import ObjectKey, World

from .support import (
    PARENT,
    FakeFunction,
    condition,
    config_map,
    default_runners,
    docs,
    find,
    observed_composite,
    one,
    render_documents,
    render_text,
)

USAGE = "protection.crossplane.io/v1beta1"


class Phased(FakeFunction):
    """Composes by `spec.phase`: before, a Usage protects ConfigMap "old" for as long
    as "keep" exists; after, "old" and its Usage leave together and "fresh" arrives;
    "fatal" returns a fatal result and desires nothing."""

    def compose(self, request: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        phase = observed_composite(request)["spec"].get("phase", "before")
        if phase == "fatal":
            response.fatal(rsp, "the input cannot be read")
            return
        config_map(rsp, "keep", {"k": "keep"})
        if phase == "before":
            config_map(rsp, "old", {"k": "old"})
            resource.update(
                rsp.desired.resources["usage"],
                {
                    "apiVersion": USAGE,
                    "kind": "Usage",
                    "metadata": {"name": "old-used-by-keep"},
                    "spec": {
                        "of": {
                            "apiVersion": "v1",
                            "kind": "ConfigMap",
                            "resourceRef": {"name": "old"},
                        },
                        "by": {
                            "apiVersion": "v1",
                            "kind": "ConfigMap",
                            "resourceRef": {"name": "keep"},
                        },
                        "replayDeletion": True,
                    },
                },
            )
            rsp.desired.resources["usage"].ready = fnv1.READY_TRUE
        else:
            config_map(rsp, "fresh", {"k": "fresh"})


def _phased(apis_dir: Path, phase: str, world: str = "", max_rounds: int = 20) -> Any:
    runners = {**default_runners(), "fn-parent": Phased()}
    text = (
        world.replace("phase: before", f"phase: {phase}")
        if world
        else (PARENT.replace("{children: 2}", "{children: 0, phase: before}"))
    )
    return render_text(apis_dir, text, runners, max_rounds=max_rounds)


def _running(apis_dir: Path) -> str:
    before = _phased(apis_dir, "before")
    assert before.ok, before.errors
    return output.to_yaml(before)


def test_composed_resources_are_tracked_through_resource_refs(apis_dir: Path) -> None:
    result = render_text(apis_dir, PARENT)

    parent = one(result, "XParent")
    # Sorted by apiVersion+kind+name, without a namespace: the composite is namespaced.
    assert parent["spec"]["crossplane"]["resourceRefs"] == [
        {"apiVersion": "example.org/v1", "kind": "XChild", "name": "web-0"},
        {"apiVersion": "example.org/v1", "kind": "XChild", "name": "web-1"},
    ]
    child = one(result, "XChild", "web-0")
    objects = {o["metadata"]["name"] for o in find(result, "Object")}
    refs = child["spec"]["crossplane"]["resourceRefs"]
    assert [r["kind"] for r in refs] == ["Object"] and refs[0]["name"] in objects


# A ConfigMap the composite controls, but its references do not list: Crossplane
# neither shows it to the functions nor deletes it.
STRAY = """---
apiVersion: v1
kind: ConfigMap
metadata:
  name: stray
  namespace: team-a
  annotations: {crossplane.io/composition-resource-name: stray}
  labels: {crossplane.io/composite: web}
  ownerReferences:
  - {apiVersion: example.org/v1, kind: XParent, name: web, controller: true}
"""


class Recording(Phased):
    """Phased, noting the names of the composed resources each call observed."""

    def __init__(self) -> None:
        self.seen: list[list[str]] = []

    def compose(self, request: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        self.seen.append(sorted(request.observed.resources))
        super().compose(request, rsp)


def test_only_what_resource_refs_list_is_observed_and_collected(apis_dir: Path) -> None:
    running = _running(apis_dir)
    recording = Recording()
    runners = {**default_runners(), "fn-parent": recording}
    result = render_text(apis_dir, running + STRAY, runners)

    assert result.ok, result.errors
    assert recording.seen and all(names == ["keep", "old", "usage"] for names in recording.seen)
    assert one(result, "ConfigMap", "stray")


def test_a_usage_protected_delete_is_refused_and_ends_the_reconcile_there(
    apis_dir: Path,
) -> None:
    running = _running(apis_dir)

    result = _phased(apis_dir, "after", running, max_rounds=1)

    parent = one(result, "XParent")
    # Garbage collection ran first: the Usage (which nothing protects) went, then the
    # delete of "old" was refused while the leaving Usage still held it.
    assert find(result, "Usage") == []
    old = one(result, "ConfigMap", "old")
    # Crossplane strips the composed-resource labels before it deletes.
    assert LABEL_COMPOSITE not in (old["metadata"].get("labels") or {})
    # The reconcile ended there: nothing applied, the references not replaced.
    assert find(result, "ConfigMap", "fresh") == []
    # (sorted by apiVersion + kind + name, as UpdateResourceRefs sorts them)
    assert [r["name"] for r in parent["spec"]["crossplane"]["resourceRefs"]] == [
        "old-used-by-keep",
        "keep",
        "old",
    ]
    # A Conflict is requeued silently: no event, no status write.
    assert condition(parent, "Synced")["status"] == "True"
    assert [r.error for r in result.reports] == [
        "cannot compose resources: cannot garbage collect composed resources that are no "
        'longer desired: cannot delete composed resource "old" (a ConfigMap named old): '
        'admission webhook "nousages.protection.crossplane.io" denied the request: This '
        'resource is in-use by 1 usage(s), including the *v1beta1.Usage "old-used-by-keep" '
        '(in namespace "team-a") by resource ConfigMap/keep.'
    ]
    assert [r.events for r in result.reports] == [[]]


def test_the_retry_deletes_once_the_usage_has_gone(apis_dir: Path) -> None:
    running = _running(apis_dir)

    result = _phased(apis_dir, "after", running)

    assert result.ok, result.errors
    # The first reconcile's refusal left no trace on the composite; the render keeps it.
    (conflict,) = result.conflicts
    assert conflict.startswith("XParent team-a/web: cannot compose resources: ")
    assert 'cannot delete composed resource "old"' in conflict
    text = summarize(result, ["XParent", "XChild"])
    assert f"\nREFUSED DELETES (retried silently on a control plane)\n{conflict}\n" in text
    assert find(result, "ConfigMap", "old") == []
    assert one(result, "ConfigMap", "fresh")
    parent = one(result, "XParent")
    assert [r["name"] for r in parent["spec"]["crossplane"]["resourceRefs"]] == ["fresh", "keep"]


def test_a_usage_that_stays_wedges_the_composite_with_synced_still_true(
    apis_dir: Path,
) -> None:
    running = _running(apis_dir)
    # A Usage nothing composes: it protects "old" for good.
    pinned = """---
apiVersion: protection.crossplane.io/v1beta1
kind: Usage
metadata: {name: pinned, namespace: team-a}
spec:
  of: {apiVersion: v1, kind: ConfigMap, resourceRef: {name: old}}
  reason: kept for the audit
"""

    result = _phased(apis_dir, "after", running + pinned)

    assert result.converged
    assert not result.ok
    assert one(result, "ConfigMap", "old")
    assert find(result, "ConfigMap", "fresh") == []
    assert condition(one(result, "XParent"), "Synced")["status"] == "True"
    (error,) = result.errors
    assert error.endswith(
        'This resource is in-use by 1 usage(s), including the *v1beta1.Usage "pinned" '
        '(in namespace "team-a") with reason: "kept for the audit".'
    )


class Gone(Phased):
    """Desires only "fresh": "keep", "old" and the Usage all leave."""

    def compose(self, request: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        config_map(rsp, "fresh", {"k": "fresh"})


def test_garbage_collection_stops_at_the_first_refused_delete(apis_dir: Path) -> None:
    running = _running(apis_dir)
    pins = "".join(
        f"""---
apiVersion: protection.crossplane.io/v1beta1
kind: ClusterUsage
metadata: {{name: pin-{name}}}
spec:
  of: {{apiVersion: v1, kind: ConfigMap, resourceRef: {{name: {name}, namespace: team-a}}}}
  reason: pinned
"""
        for name in ("keep", "old")
    )
    runners = {**default_runners(), "fn-parent": Gone()}

    result = render_text(apis_dir, running + pins, runners, max_rounds=1)

    # The Usage, which nothing protects, went first; then "keep" was refused and
    # the pass stopped: "old" was never tried, so it still carries its labels.
    assert find(result, "Usage") == []
    labels = {
        o["metadata"]["name"]: o["metadata"].get("labels") or {} for o in find(result, "ConfigMap")
    }
    assert LABEL_COMPOSITE not in labels["keep"]
    assert labels["old"][LABEL_COMPOSITE] == "web"
    assert "fresh" not in labels
    (report,) = result.reports
    assert report.error is not None
    assert 'cannot delete composed resource "keep"' in report.error
    assert '*v1beta1.ClusterUsage "pin-keep" with reason: "pinned"' in report.error


def test_a_fatal_result_stops_before_garbage_collection_and_apply(apis_dir: Path) -> None:
    running = _running(apis_dir)

    result = _phased(apis_dir, "fatal", running)

    # Nothing the fatal pipeline stopped desiring was deleted.
    assert {o["metadata"]["name"] for o in find(result, "ConfigMap")} == {"keep", "old"}
    assert one(result, "Usage")
    synced = condition(one(result, "XParent"), "Synced")
    assert synced["status"] == "False"
    assert "returned a fatal result: the input cannot be read" in synced["message"]


@pytest.mark.parametrize(("api_version", "kind"), USAGE_TYPES)
def test_every_usage_kind_protects_and_names_its_go_type(api_version: str, kind: str) -> None:
    namespace = "" if kind == "ClusterUsage" else "team-a"
    meta: dict[str, Any] = {"name": "u"}
    if namespace:
        meta["namespace"] = namespace
    usage = {
        "apiVersion": api_version,
        "kind": kind,
        "metadata": meta,
        "spec": {
            "of": {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "resourceSelector": {"matchLabels": {"app": "web"}, "namespace": "team-a"},
            },
            "by": {"apiVersion": "v1", "kind": "Secret", "resourceRef": {"name": "s"}},
        },
    }

    def config_map(namespace: str) -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "cm", "namespace": namespace, "labels": {"app": "web"}},
        }

    used = config_map("team-a")
    world = World([usage, used])
    target = ObjectKey("v1", "ConfigMap", "team-a", "cm")

    found = usages_of(world, target)

    assert [u["metadata"]["name"] for u in found] == ["u"]
    where = ' (in namespace "team-a")' if namespace else ""
    assert refusal(found).endswith(
        f'including the *v1beta1.{kind} "u"{where} by resource Secret/s.'
    )
    other = ObjectKey("v1", "ConfigMap", "team-b", "cm")
    # The selector names its namespace: the same ConfigMap elsewhere is not protected.
    assert usages_of(World([usage, config_map("team-b")]), other) == []


class Renaming(FakeFunction):
    """Composes one ConfigMap under the key "settings", named after `spec.phase`."""

    def compose(self, request: fnv1.RunFunctionRequest, rsp: fnv1.RunFunctionResponse) -> None:
        phase = observed_composite(request)["spec"].get("phase", "before")
        config_map(rsp, "settings", {"phase": phase})
        resource.update(
            rsp.desired.resources["settings"], {"metadata": {"name": f"settings-{phase}"}}
        )


def test_a_composed_resource_keeps_its_name_when_the_function_renames_it(
    apis_dir: Path,
) -> None:
    runners = {**default_runners(), "fn-parent": Renaming()}
    source = PARENT.replace("{children: 2}", "{children: 0, phase: before}")
    running = output.to_yaml(render_text(apis_dir, source, runners))

    world = parse_stream(running, "world.yaml", observed=True)
    result = render_documents(apis_dir, [*world, *docs(source.replace("before", "after"))], runners)

    assert result.ok, result.errors
    # Crossplane takes the name of a composed resource it observes under the key from
    # the observed object: the ConfigMap is updated in place, not created beside.
    (settings,) = find(result, "ConfigMap")
    assert settings["metadata"]["name"] == "settings-before"
    assert settings["data"] == {"phase": "after"}
    parent = one(result, "XParent")
    assert [r["name"] for r in parent["spec"]["crossplane"]["resourceRefs"]] == ["settings-before"]


def test_a_composite_applied_again_from_its_source_keeps_what_crossplane_wrote(
    apis_dir: Path,
) -> None:
    # STRAY under a composite applied again from a repository: the source document has
    # no `spec.crossplane.resourceRefs`, and an apply keeps the ones Crossplane wrote.
    world = parse_stream(_running(apis_dir) + STRAY, "world.yaml", observed=True)
    # What a control plane's world also carries: the Composition and revision it chose.
    (parent,) = [d.obj for d in world if d.obj["kind"] == "XParent"]
    chosen = {
        "compositionRef": {"name": "xparents.example.org"},
        "compositionRevisionRef": {"name": "xparents.example.org-1a2b3c4"},
    }
    parent["spec"]["crossplane"].update(chosen)
    source = docs(PARENT.replace("{children: 2}", "{children: 0, phase: before}"))
    recording = Recording()
    runners = {**default_runners(), "fn-parent": recording}
    result = render_documents(apis_dir, [*world, *source], runners)

    assert result.ok, result.errors
    assert recording.seen and all(names == ["keep", "old", "usage"] for names in recording.seen)
    assert one(result, "ConfigMap", "stray")
    kept = one(result, "XParent")["spec"]["crossplane"]
    assert {k: kept.get(k) for k in chosen} == chosen
