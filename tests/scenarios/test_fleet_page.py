"""`-o html` opened in headless Chromium: what a person sees is the fleet.

The example fleets are rendered for real; the 300-cluster fleet is a rendered
world built directly (what `render` would leave: clusters with published
capacity, placed replicas, a gateway routing to some of them), since rendering
300 clusters takes minutes.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

from modelplane_cli.render.html import to_html
from modelplane_cli.render.result import RenderResult

from .browser import Page, open_page, pixels
from .cli import rendered

Obj = dict[str, Any]
API = "modelplane.ai/v1alpha1"


def _render_page(tmp_path: Path, *paths: str) -> tuple[str, list[Obj]]:
    """The page `render -o html` writes, and the world it was drawn from (one render)."""
    examples = Path(__file__).resolve().parents[2] / "examples"
    page, world = rendered("render", *(examples / p for p in paths), "-o", "html")
    assert page.code == 0, page.err
    return page.out, world.objects


def _sees_a_drawn_page(page: Page) -> None:
    image = pixels(page.screenshot)[:, :, :3].reshape(-1, 3).astype(np.int32)
    # Each colour as one number (0xRRGGBB): counting distinct numbers is counting
    # distinct rows, without sorting rows lexicographically.
    colours = len(np.unique(image[:, 0] << 16 | image[:, 1] << 8 | image[:, 2]))
    inked = float((image.sum(axis=1) < 600).mean())
    assert colours > 200, f"{colours} colours: the page looks blank"
    assert inked > 0.01, f"{inked:.3%} of the screen drawn: the page looks blank"


def _expectations(objects: list[Obj]) -> tuple[set[str], set[str], set[str]]:
    clusters = {o["metadata"]["name"] for o in objects if o["kind"] == "InferenceCluster"}
    replicas = {
        p["replica"]
        for o in objects
        if o["kind"] == "ModelDeployment"
        for p in (o.get("status") or {}).get("placements") or []
    }
    routed = {
        e["replica"]
        for o in objects
        if o["kind"] == "ModelService"
        for e in (o.get("status") or {}).get("endpoints") or []
        if e.get("replica")
    }
    return clusters, replicas, routed


def _check(html: str, objects: list[Obj], tmp_path: Path, height: int = 1000) -> Page:
    assert not re.search(r"<link|<img|\bsrc=|url\(|@import|https?://[^\"<]*\.(css|js)", html)
    path = tmp_path / "fleet.html"
    path.write_text(html)
    page = open_page(path, tmp_path, height=height)
    clusters, replicas, routed = _expectations(objects)
    shown = set(
        re.findall(r'<article class="cluster" data-cluster="([^"]+)"><h3>([^<]+)</h3>', page.dom)
    )
    assert shown == {(c, c) for c in clusters}
    chips = set(re.findall(r'<span class="replica[^"]*" data-replica="([^"]+)"', page.dom))
    assert chips == replicas
    # The script drew one line from the gateway to each routed replica.
    lines = set(re.findall(r'<path [^>]*data-replica="([^"]+)"', page.dom))
    assert lines == routed
    _sees_a_drawn_page(page)
    return page


def test_the_serving_example_draws_clusters_replicas_and_routes(tmp_path: Path) -> None:
    html, objects = _render_page(tmp_path, "catalog", "serving")

    _check(html, objects, tmp_path)

    assert _expectations(objects)[2], "the serving example routes to replicas"


def test_the_example_fleet_draws_every_pool_filled(tmp_path: Path) -> None:
    html, objects = _render_page(tmp_path, "catalog", "fleet")

    page = _check(html, objects, tmp_path)

    fills = dict(re.findall(r'data-pool="([^"]+)" data-fill="([0-9.]+)"', page.dom))
    assert set(fills) == {"h100", "h200", "l4"}
    assert any(float(f) > 0 for f in fills.values())


def _world(clusters: int, deployments: int) -> list[Obj]:
    objects: list[Obj] = []
    names = [f"cluster-{i:03d}" for i in range(clusters)]
    for i, name in enumerate(names):
        objects.append(
            {
                "apiVersion": API,
                "kind": "InferenceCluster",
                "metadata": {"name": name, "labels": {"region": f"region-{i % 7}"}},
                "spec": {
                    "nodePools": [
                        {"name": "h100", "className": "h100-8x", "nodeCount": 4},
                        {"name": "l4", "className": "l4-1x", "nodeCount": 8},
                    ]
                },
                "status": {
                    "capacity": {
                        "pools": [
                            {
                                "name": "h100",
                                "nodes": 4,
                                "devices": {"gpu": {"total": 32, "committed": (i * 8) % 40}},
                            },
                            {
                                "name": "l4",
                                "nodes": 8,
                                "devices": {"gpu": {"total": 8, "committed": i % 9}},
                            },
                        ],
                        "queues": [
                            {
                                "name": "team",
                                "provider": "Kueue",
                                "gpu": {"quota": 16, "used": i % 17},
                            }
                        ],
                    }
                },
            }
        )
    endpoints: list[Obj] = []
    for d in range(deployments):
        placements = [
            {
                "replica": f"model-{d:02d}-{r}",
                "index": r,
                "cluster": names[(d * 37 + r * 11) % clusters],
                "pools": {"workers": "h100"},
                "serving": r % 5 != 4,
            }
            for r in range(1 + d % 12)
        ]
        objects.append(
            {
                "apiVersion": API,
                "kind": "ModelDeployment",
                "metadata": {"name": f"model-{d:02d}", "namespace": f"team-{d % 5}"},
                "spec": {"replicas": len(placements) + d % 2},
                "status": {"placements": placements},
            }
        )
        if d % 4 == 0:
            endpoints.extend(
                {
                    "cluster": p["cluster"],
                    "deployment": f"model-{d:02d}",
                    "replica": p["replica"],
                    "url": f"http://{p['cluster']}.example/{p['replica']}",
                    "weight": 100,
                }
                for p in placements
            )
    objects.append(
        {
            "apiVersion": API,
            "kind": "InferenceGateway",
            "metadata": {"name": "fleet"},
            "spec": {"clusterRef": {"name": names[0]}},
            "status": {"address": "http://models.example.com"},
        }
    )
    objects.append(
        {
            "apiVersion": API,
            "kind": "ModelService",
            "metadata": {"name": "chat", "namespace": "team-0"},
            "spec": {"gatewayRef": {"name": "fleet"}},
            "status": {"endpoints": endpoints},
        }
    )
    return objects


def test_a_300_cluster_fleet_is_drawn_whole(tmp_path: Path) -> None:
    objects = _world(300, 40)
    result = RenderResult(objects=objects, events=[], reports=[], converged=True, rounds=3)

    html = to_html(result)

    assert html == to_html(result)  # the same world, the same bytes
    _check(html, objects, tmp_path, height=2400)
