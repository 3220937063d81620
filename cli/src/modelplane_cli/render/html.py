"""`-o html`: one self-contained page that draws the fleet.

Every cluster is a card: its name and labels, each pool as a bar filled to its
committed share of devices (with totals, committed and free), queue quotas, and
one chip per replica placed there, coloured by its deployment. Gateways sit
above the clusters; a line runs from each gateway to every replica its services
route to (drawn by a small inline script once the page is laid out; the same
routes are listed in a table for a reader without scripts). Nothing is fetched:
styles, script and bars are inline, so the page opens from a CI artifact. Cards
flow in a grid, so 300 clusters read as rows of cards, not one long column.

The same world gives the same bytes: everything is sorted, nothing is dated.
"""

from __future__ import annotations

from html import escape

from modelplane.traffic.weights import SCALE
from modelplane_cli.render.fleetmap import Cluster, FleetMap, Gateway, Pool, fleet_map
from modelplane_cli.render.result import RenderResult

# Labels Crossplane sets on every composite say nothing about a cluster.
_CROSSPLANE = "crossplane.io/"
# Hues are spread by the golden angle so neighbouring deployments differ.
_GOLDEN_ANGLE = 137.508


def to_html(result: RenderResult) -> str:
    fleet = fleet_map(result.objects)
    colours = {name: _hue(i) for i, (name, _) in enumerate(fleet.deployments)}
    placed = sum(len(c.replicas) for c in fleet.clusters)
    wanted = sum(w for _, w in fleet.deployments)
    routes = sum(len(g.routes) for g in fleet.gateways)
    state = "converged" if result.converged else "did NOT converge"
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>Modelplane fleet</title>",
        f"<style>{_CSS}</style></head><body>",
        "<header><h1>Modelplane fleet</h1>",
        f'<p class="counts">{_n(len(fleet.clusters), "cluster")} · '
        f"{_n(len(fleet.deployments), 'deployment')} · {placed} of {wanted} replicas placed · "
        f"{_n(len(fleet.gateways), 'gateway')} · {_n(routes, 'route')} · "
        f"{_n(result.rounds, 'round')} ({state})</p></header>",
        _legend(fleet, colours),
        _gateways(fleet.gateways),
        '<section id="clusters"><h2>Clusters</h2><div class="grid">',
        *(_cluster(c, colours) for c in fleet.clusters),
        "</div></section>",
        _route_table(fleet.gateways),
        '<svg id="links" aria-hidden="true"></svg>',
        f"<script>{_SCRIPT}</script>",
        "</body></html>",
    ]
    return "\n".join(p for p in parts if p) + "\n"


def _legend(fleet: FleetMap, colours: dict[str, str]) -> str:
    if not fleet.deployments:
        return ""
    placed: dict[str, int] = {}
    for cluster in fleet.clusters:
        for replica in cluster.replicas:
            placed[replica.deployment] = placed.get(replica.deployment, 0) + 1
    items = "".join(
        f'<li data-deployment="{escape(name)}"><span class="swatch" '
        f'style="background:{colours[name]}"></span>{escape(name)} '
        f'<span class="num">{placed.get(name, 0)}/{wanted}</span></li>'
        for name, wanted in fleet.deployments
    )
    return (
        f'<section id="deployments"><h2>Deployments</h2><ul class="legend">{items}</ul></section>'
    )


def _gateways(gateways: list[Gateway]) -> str:
    if not gateways:
        return ""
    cards: list[str] = []
    for gateway in gateways:
        services = sorted({r.service for r in gateway.routes})
        on = f" on {escape(gateway.cluster)}" if gateway.cluster else ""
        cards.append(
            f'<div class="gateway" data-gateway="{escape(gateway.name)}">'
            f"<b>{escape(gateway.name)}</b>{on}<br>"
            f'<span class="addr">{escape(gateway.address or "-")}</span><br>'
            f'<span class="num">{escape(", ".join(services) or "no services")}</span></div>'
        )
    return (
        f'<section id="gateways"><h2>Gateways</h2><div class="row">{"".join(cards)}</div></section>'
    )


def _cluster(cluster: Cluster, colours: dict[str, str]) -> str:
    labels = ", ".join(
        f"{k}={v}" for k, v in sorted(cluster.labels.items()) if not k.startswith(_CROSSPLANE)
    )
    pools = "".join(_pool(p) for p in cluster.pools) or '<p class="num">no pools published</p>'
    queues = "".join(
        f'<p class="queue">queue {escape(q.name)} ({escape(q.provider)}): '
        f"{_or_dash(q.used)}/{_or_dash(q.quota)} gpu</p>"
        for q in cluster.queues
    )
    chips = "".join(
        f'<span class="replica{"" if r.serving else " pending"}" '
        f'data-replica="{escape(r.name)}" data-deployment="{escape(r.deployment)}" '
        f'style="--c:{colours.get(r.deployment, "#888")}" '
        f'title="{escape(r.name)} ({escape(r.deployment)}) on {escape(r.pools)}'
        f'{"" if r.serving else ", not serving yet"}">'
        f"{escape(r.deployment.rpartition('/')[2])}</span>"
        for r in sorted(cluster.replicas, key=lambda r: (r.deployment, r.name))
    )
    return (
        f'<article class="cluster" data-cluster="{escape(cluster.name)}">'
        f"<h3>{escape(cluster.name)}</h3>"
        f'<p class="labels">{escape(labels)}</p>{pools}{queues}'
        f'<div class="replicas">{chips}</div></article>'
    )


def _pool(pool: Pool) -> str:
    fill = pool.fill()
    level = "full" if fill >= 1 else "busy" if fill >= 0.7 else "ok"
    width = round(min(fill, 1.0) * 100, 1)
    numbers = ", ".join(f"{d.committed}/{d.total} {d.name} ({d.free} free)" for d in pool.devices)
    class_name = f" ({escape(pool.class_name)})" if pool.class_name else ""
    return (
        f'<div class="pool" data-pool="{escape(pool.name)}" data-fill="{fill:.3f}">'
        f'<span class="pname">{escape(pool.name)}{class_name} x {pool.nodes}</span>'
        f'<svg class="bar" viewBox="0 0 100 6" preserveAspectRatio="none">'
        f'<rect width="100" height="6" class="empty"/>'
        f'<rect width="{width:g}" height="6" class="{level}"/></svg>'
        f'<span class="num">{escape(numbers or "no devices")}</span></div>'
    )


def _route_table(gateways: list[Gateway]) -> str:
    rows = "".join(
        f'<tr class="route" data-gateway="{escape(g.name)}" data-replica="{escape(r.replica)}">'
        f"<td>{escape(g.name)}</td><td>{escape(r.service)}</td>"
        f"<td>{escape(r.replica or 'external')}</td><td>{escape(r.cluster or '-')}</td>"
        f"<td>{r.weight * 100 / SCALE:g}%</td><td>{escape(r.url)}</td></tr>"
        for g in gateways
        for r in g.routes
    )
    if not rows:
        return ""
    return (
        '<section id="routes"><h2>Routes</h2><table><thead><tr><th>Gateway</th><th>Service</th>'
        "<th>Replica</th><th>Cluster</th><th>Share</th><th>URL</th></tr></thead>"
        f"<tbody>{rows}</tbody></table></section>"
    )


def _hue(index: int) -> str:
    return f"hsl({index * _GOLDEN_ANGLE % 360:.0f} 65% 48%)"


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _or_dash(value: int | None) -> str:
    return "-" if value is None else str(value)


_CSS = """
body{
font:13px/1.35 system-ui,sans-serif;margin:0;
padding:12px 16px;color:#1d2330;background:#fff}
h1{font-size:20px;margin:0 0 4px}
h2{font-size:15px;margin:16px 0 6px}
h3{font-size:13px;margin:0}
.counts,.num,.labels,.addr,.queue{color:#5a6273;margin:0}
.legend{list-style:none;padding:0;margin:0;display:flex;flex-wrap:wrap;gap:4px 14px}
.swatch{
display:inline-block;width:11px;height:11px;
border-radius:2px;margin-right:4px;vertical-align:-1px}
.row{display:flex;flex-wrap:wrap;gap:10px}
.gateway{
border:2px solid #3553c9;background:#eef1fd;
border-radius:6px;padding:6px 10px;max-width:420px}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(200px,1fr));gap:8px}
.cluster{
border:1px solid #c9ced8;border-radius:6px;padding:6px 8px;
background:#f7f8fad9;position:relative;z-index:1}
.gateway{position:relative;z-index:1}
.labels{font-size:11px;overflow-wrap:anywhere}
.pool{margin-top:4px}
.pname{font-weight:600}
.bar{display:block;width:100%;height:8px;margin:2px 0}
.bar .empty{fill:#dde1e8}
.bar .ok{fill:#2e9d58}
.bar .busy{fill:#d99a16}
.bar .full{fill:#c93535}
.pool .num{font-size:11px}
.queue{font-size:11px;margin-top:3px}
.replicas{display:flex;flex-wrap:wrap;gap:3px;margin-top:5px}
.replica{background:var(--c);color:#fff;border-radius:3px;padding:1px 5px;font-size:11px}
.replica.pending{
background:repeating-linear-gradient(45deg,var(--c) 0 4px,#fff 4px 6px);
color:#1d2330}
table{border-collapse:collapse;font-size:12px}
td,th{border-bottom:1px solid #e3e6ec;padding:2px 8px;text-align:left}
#links{position:absolute;left:0;top:0;pointer-events:none;overflow:visible;z-index:0}
#links path{fill:none;stroke:#3553c9;stroke-opacity:.45;stroke-width:1.5}
"""

_SCRIPT = """
(function(){
  var svg=document.getElementById('links');
  var ns='http://www.w3.org/2000/svg';
  function draw(){
    while(svg.firstChild){svg.removeChild(svg.firstChild);}
    var doc=document.documentElement;
    svg.setAttribute('width',doc.scrollWidth);svg.setAttribute('height',doc.scrollHeight);
    var rows=document.querySelectorAll('tr.route');
    for(var i=0;i<rows.length;i++){
      var g=rows[i].getAttribute('data-gateway'),r=rows[i].getAttribute('data-replica');
      if(!r){continue;}
      var a=document.querySelector('.gateway[data-gateway="'+CSS.escape(g)+'"]');
      var b=document.querySelector('.replica[data-replica="'+CSS.escape(r)+'"]');
      if(!a||!b){continue;}
      var ra=a.getBoundingClientRect(),rb=b.getBoundingClientRect();
      var x1=ra.left+ra.width/2+scrollX,y1=ra.bottom+scrollY;
      var x2=rb.left+rb.width/2+scrollX,y2=rb.top+scrollY;
      var p=document.createElementNS(ns,'path');
      var m=(y1+y2)/2;
      p.setAttribute('d','M'+x1+','+y1+' C'+x1+','+m+' '+x2+','+m+' '+x2+','+y2);
      p.setAttribute('data-replica',r);
      svg.appendChild(p);
    }
  }
  draw();addEventListener('resize',draw);
})();
"""
