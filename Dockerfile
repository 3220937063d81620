# One image per function: docker build --build-arg FUNCTION=compose-model-deployment .
# Builds wheels for the function and the workspace packages it needs, then runs
# them on a distroless Python base, serving gRPC on 9443 as Crossplane expects.
# The build stage is Debian 12 like the runtime, so the venv's interpreter link
# (/usr/bin/python3.11) exists in the distroless image too.
# A function composes on as many processes as the container's CPU limit (the
# command's --workers 0, at most 2 without a limit); set WORKERS=1 for one process.
FROM debian:12-slim AS build
ARG FUNCTION
RUN test -n "${FUNCTION}" || (echo "pass --build-arg FUNCTION=<functions/ directory>" && false)
RUN apt-get update && apt-get install -y --no-install-recommends python3 python3-venv python3-pip \
 && rm -rf /var/lib/apt/lists/* \
 && python3 -m venv /opt/uv && /opt/uv/bin/pip install --no-cache-dir uv
ENV PATH=/opt/uv/bin:$PATH UV_PYTHON=/usr/bin/python3
WORKDIR /src
COPY . .
RUN uv export --frozen --no-dev --no-editable --no-emit-workspace --package "${FUNCTION}" -o /tmp/requirements.txt \
 && uv build --wheel --package modelplane-models -o /wheels \
 && uv build --wheel --package modelplane -o /wheels \
 && uv build --wheel --package "${FUNCTION}" -o /wheels \
 && python3 -m venv /venv/fn \
 && /venv/fn/bin/pip install --no-cache-dir --require-hashes -r /tmp/requirements.txt \
 && /venv/fn/bin/pip install --no-cache-dir --no-deps /wheels/*.whl \
 && ln -s "/venv/fn/bin/${FUNCTION}" /venv/fn/bin/function

FROM gcr.io/distroless/python3-debian12 AS image
COPY --from=build /venv/fn /venv/fn
EXPOSE 9443
USER nonroot:nonroot
ENTRYPOINT ["/venv/fn/bin/function"]
