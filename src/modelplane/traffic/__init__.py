"""The traffic path: how a request reaches a serving replica, and one address per model.

Pure: no Crossplane or gRPC imports. `names` holds the names every side of the
path agrees on (the gateways, their namespace, the route header); `gateways`
the Gateway manifests; `urls` reads and writes endpoint URLs; `weights` turns
relative weights into the integer weights Gateway API takes; `service` plans a
ModelService's route on its InferenceGateway's hub cluster. A replica's own
traffic objects are rendered with the replica (`modelplane.workloads.traffic`).
"""
