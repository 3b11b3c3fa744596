# syntax=docker/dockerfile:1
# The full runner image (docs/adr/0015): the runner image plus the engines of the operations that
# most jobs never use — Chromium (HTML, Markdown and URL → PDF), OCRmyPDF with Tesseract and its
# languages (OCR, PDF/A conversion), a headless JRE and veraPDF (PDF/A validation). The controller
# runs it only for those jobs (controller/runner-image.ts, FOLIO_RUNNER_FULL_IMAGE), so the runner
# image every other job pulls stays within its budget. Build it after the runner image:
#
#   docker build -f docker/runner-full.Dockerfile -t folio/runner-full:0.1.0 \
#     --build-arg RUNNER_IMAGE=folio/runner:0.1.0 .
#
# Layered on the runner image: a node that runs both shares every layer of the first.

ARG RUNNER_IMAGE=folio/runner:dev

# --- veraPDF's command-line jar, from Maven Central (bin/fetch-verapdf does the same on a machine) ---
FROM debian:bookworm-slim AS verapdf
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
ARG VERAPDF_VERSION=1.28.2
# The JRE's postinst links its manual pages into /usr/share/man/man1, which a slim image lacks
# (Debian bug #863199): the directory is made first, its pages are still never installed.
# hadolint ignore=DL3008
RUN mkdir -p /usr/share/man/man1 \
 && apt-get update \
 && apt-get install -y --no-install-recommends maven ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && mvn -q dependency:copy -Dartifact="org.verapdf.apps:greenfield-apps:${VERAPDF_VERSION}" \
      -DoutputDirectory=/opt/verapdf -Dmdep.stripVersion=true \
 && echo "${VERAPDF_VERSION}" > /opt/verapdf/version \
 && rm -rf /root/.m2

# --- the image -------------------------------------------------------------------------------------
FROM ${RUNNER_IMAGE}
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
USER 0
COPY bin/debian-packages.txt /tmp/debian-packages.txt
# The `full` packages of bin/debian-packages.txt. The JRE's man pages, Chromium's locales other
# than en-US and the C headers python3-pil ships are never installed (dpkg path filters, as the
# base image's for documentation); the JRE's postinst still needs /usr/share/man/man1 to exist
# (see above).
# hadolint ignore=DL3008
RUN mkdir -p /usr/share/man/man1 \
 && printf 'path-exclude=%s\npath-include=%s\npath-exclude=%s\n' '/usr/lib/chromium/locales/*' '/usr/lib/chromium/locales/en-US.pak' \
      '/usr/include/*' >/etc/dpkg/dpkg.cfg.d/folio-full \
 && mapfile -t pkgs < <(awk '!/^[[:space:]]*#/ && NF && $2 == "full" {print $1}' /tmp/debian-packages.txt) \
 && test "${#pkgs[@]}" -gt 0 \
 && apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${pkgs[@]}" \
 && rm -rf /var/lib/apt/lists/* /tmp/debian-packages.txt \
 && fc-cache -f
COPY --from=verapdf /opt/verapdf/greenfield-apps.jar /opt/folio/.tools/verapdf/greenfield-apps.jar
COPY --from=verapdf /opt/verapdf/version /opt/folio/.tools/verapdf/version
ENV FOLIO_CHROMIUM=chromium
USER 10001:10001
LABEL org.opencontainers.image.title="Folio runner (full)" \
      org.opencontainers.image.description="Runs Folio's OCR, PDF/A and web-page jobs: the runner image plus Chromium, OCRmyPDF/Tesseract and veraPDF."
