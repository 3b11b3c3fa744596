#!/usr/bin/env bash
# The experiment of docs/adr/0006-local-kubelet-over-real-kubelet.md: can a real kubelet, with a
# real containerd, run this project's pods on this kind of host? Builds both from the Go module
# proxy, at the control plane's Kubernetes version, into the version-keyed cache of test/k8s
# (~/.cache/folio-k8s/<versions>/real-kubelet/). Not part of any make target: the ADR records why.
#
#   test/k8s/real-kubelet/build.sh        prints the bin directory on its last line
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$here/versions.env"
CONTAINERD_VERSION="${CONTAINERD_VERSION:-v2.4.2}"
bin="${FOLIO_K8S_CACHE:-$HOME/.cache/folio-k8s}/$K8S_VERSION-$ETCD_VERSION/real-kubelet"
mkdir -p "$bin"
log() { printf '[real-kubelet] %s\n' "$*" >&2; }
export GOFLAGS=-mod=mod GOTOOLCHAIN="${GOTOOLCHAIN:-local}" GOWORK=off
work="$(mktemp -d "${TMPDIR:-/tmp}/folio-real-kubelet.XXXXXX")"
trap 'rm -rf "$work"' EXIT

k8s_minor="${K8S_VERSION#v1.}"; k8s_minor="${k8s_minor%%.*}"
staging_version="v0.$k8s_minor.${K8S_VERSION##*.}"

if [ ! -x "$bin/kubelet" ]; then
  mkdir -p "$work/k8s"
  gomod="$(cd "$work" && go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')"
  staging="$(sed -n 's#^[[:space:]]*\(k8s.io/[^[:space:]]*\) => ./staging/src/.*#\1#p' "$gomod" | sort -u)"
  required="$(sed -n 's#^[[:space:]]*\(k8s.io/[^[:space:]]*\) v0\.0\.0\([[:space:]].*\)\{0,1\}$#\1#p' "$gomod" | sort -u)"
  {
    echo "module folio.local/real-kubelet"
    grep -E '^(go|godebug) ' "$gomod"
    echo "require k8s.io/kubernetes $K8S_VERSION"
    echo "replace ("
    comm -12 <(printf '%s\n' "$staging") <(printf '%s\n' "$required") | while read -r m; do printf '\t%s => %s %s\n' "$m" "$m" "$staging_version"; done
    echo ")"
  } >"$work/k8s/go.mod"
  log "building kubelet $K8S_VERSION"
  t0=$SECONDS
  (cd "$work/k8s" && CGO_ENABLED=0 go build -trimpath -p 2 -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION" \
    -o "$bin/kubelet" k8s.io/kubernetes/cmd/kubelet)
  log "kubelet built in $((SECONDS - t0)) s"
fi

if [ ! -x "$bin/containerd" ]; then
  mkdir -p "$work/ctd"
  {
    echo "module folio.local/real-containerd"
    echo "go 1.24"
    echo "require github.com/containerd/containerd/v2 $CONTAINERD_VERSION"
  } >"$work/ctd/go.mod"
  log "building containerd $CONTAINERD_VERSION"
  t0=$SECONDS
  # No btrfs headers here, and the CRI plugin needs no cgo: the tags containerd's release builds use.
  (cd "$work/ctd" && CGO_ENABLED=0 go build -trimpath -p 2 -tags "no_btrfs urfave_cli_no_docs" -ldflags "-s -w" \
    -o "$bin/" github.com/containerd/containerd/v2/cmd/containerd github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2 \
    github.com/containerd/containerd/v2/cmd/ctr)
  log "containerd built in $((SECONDS - t0)) s"
fi
echo "$bin"
