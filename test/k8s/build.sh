#!/usr/bin/env bash
# Builds the local Kubernetes control plane (etcd, kube-apiserver, kube-controller-manager) with
# `go build` from the Go module proxy at the versions pinned in versions.env, into a cache outside
# the checkout:
#
#   ${FOLIO_K8S_CACHE:-$HOME/.cache/folio-k8s}/<K8S_VERSION>-<ETCD_VERSION>/bin
#
# Idempotent: a binary that is already there (and reports the pinned version) is not rebuilt, so
# CI and `make e2e` call this unconditionally. Prints the bin directory on stdout as its last line.
#
# Why a throwaway module: k8s.io/kubernetes' go.mod replaces every staging module (k8s.io/api,
# k8s.io/client-go, ...) with a local ./staging/src path, and etcd's server module replaces its
# siblings with ../api etc. Replace directives only apply in the main module, so `go install
# pkg@version` refuses such modules. A temporary main module that requires them and replaces each
# staging module with its published twin (v0.<minor>.<patch>) builds the very same source.
#
# Environment: FOLIO_K8S_CACHE (cache root), GOCACHE/GOMODCACHE (Go's own caches; pass fresh
# directories to measure a cold build), FOLIO_K8S_FORCE=1 (rebuild even if present).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=versions.env
source "$here/versions.env"

cache_root="${FOLIO_K8S_CACHE:-$HOME/.cache/folio-k8s}"
bin="$cache_root/$K8S_VERSION-$ETCD_VERSION/bin"
mkdir -p "$bin"

log() { printf '[k8s-build] %s\n' "$*" >&2; }

command -v go >/dev/null || { log "go is not installed (need Go >= $GO_MIN_VERSION)"; exit 2; }
go_version="$(go env GOVERSION)" # e.g. go1.26.8
if [ "$(printf '%s\n%s\n' "go$GO_MIN_VERSION" "$go_version" | sort -V | head -n1)" != "go$GO_MIN_VERSION" ]; then
  log "$go_version is too old: the pinned versions need Go >= $GO_MIN_VERSION"; exit 2
fi

# One build at a time per cache: CI jobs or two test runs may race to fill it.
exec 9>"$bin/.lock"
flock 9

# Reproducible, static, and gentle on a 2-core machine shared with other builds.
export GOFLAGS=-mod=mod CGO_ENABLED=0 GOTOOLCHAIN="${GOTOOLCHAIN:-local}" GOWORK=off
build_flags=(-trimpath -p 2)

k8s_minor="${K8S_VERSION#v1.}"; k8s_minor="${k8s_minor%%.*}"  # v1.36.3 -> 36
k8s_patch="${K8S_VERSION##*.}"                                # v1.36.3 -> 3
staging_version="v0.$k8s_minor.$k8s_patch"

# True when $1 exists and its --version output mentions $2 (a stale or half-written binary is
# rebuilt). The output is captured first: `bin --version | grep -q` can fail under pipefail when
# grep exits before the binary has written everything (SIGPIPE).
have() {
  local out
  [ -z "${FOLIO_K8S_FORCE:-}" ] && [ -x "$bin/$1" ] && out="$("$bin/$1" --version 2>/dev/null)" && [[ $out == *"$2"* ]]
}

work="$(mktemp -d "${TMPDIR:-/tmp}/folio-k8s-build.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# The path of the go.mod the proxy serves for module@version ($1), downloading it if needed.
gomod_of() {
  local path
  path="$(cd "$work" && go mod download -json "$1" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')"
  [ -f "$path" ] || { log "the proxy has no go.mod for $1"; exit 1; }
  printf '%s\n' "$path"
}

build_kubernetes() {
  local mod="$work/kubernetes" gomod
  mkdir -p "$mod" "$work/out-k8s"
  log "resolving k8s.io/kubernetes@$K8S_VERSION"
  gomod="$(gomod_of "k8s.io/kubernetes@$K8S_VERSION")"

  # Every `k8s.io/X => ./staging/src/k8s.io/X` that is also required (sample-* are replaced
  # but never required, and some are not published) becomes `k8s.io/X => k8s.io/X v0.M.P`.
  local staging required
  staging="$(sed -n 's#^[[:space:]]*\(k8s.io/[^[:space:]]*\) => ./staging/src/.*#\1#p' "$gomod" | sort -u)"
  required="$(sed -n 's#^[[:space:]]*\(k8s.io/[^[:space:]]*\) v0\.0\.0\([[:space:]].*\)\{0,1\}$#\1#p' "$gomod" | sort -u)"
  {
    echo "module folio.local/k8s-build"
    echo
    grep -E '^(go|godebug) ' "$gomod"
    echo
    echo "require k8s.io/kubernetes $K8S_VERSION"
    echo
    echo "replace ("
    comm -12 <(printf '%s\n' "$staging") <(printf '%s\n' "$required") | while read -r m; do
      printf '\t%s => %s %s\n' "$m" "$m" "$staging_version"
    done
    echo ")"
  } >"$mod/go.mod"
  log "go.mod replaces $(grep -c '=>' "$mod/go.mod") staging modules with their $staging_version twins"

  # /version: the same -X flags as Kubernetes' hack/lib/version.sh (kube::version::ldflags).
  local date ld="-s -w" pkg
  date="$(date -u +'%Y-%m-%dT%H:%M:%SZ')"
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld+=" -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$k8s_minor"
    ld+=" -X $pkg.gitCommit=$K8S_GIT_COMMIT -X $pkg.gitTreeState=archive -X $pkg.buildDate=$date"
  done

  log "building kube-apiserver and kube-controller-manager $K8S_VERSION (this is the long part)"
  local t0=$SECONDS
  (cd "$mod" && go build "${build_flags[@]}" -ldflags "$ld" -o "$work/out-k8s/" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager)
  mv -f "$work/out-k8s/kube-apiserver" "$work/out-k8s/kube-controller-manager" "$bin/"
  log "built Kubernetes in $((SECONDS - t0)) s"
}

build_etcd() {
  local mod="$work/etcd" gomod
  mkdir -p "$mod" "$work/out-etcd"
  gomod="$(gomod_of "go.etcd.io/etcd/server/v3@$ETCD_VERSION")"
  # The server module's root package is etcd's `main` (server/main.go calls etcdmain.Main). Its
  # sibling modules (api, client/pkg, client/v3, pkg) are published at the same version, which
  # the server's own require lines already name, so no replace is needed here.
  {
    echo "module folio.local/etcd-build"
    echo
    grep -E '^go ' "$gomod"
    echo
    echo "require go.etcd.io/etcd/server/v3 $ETCD_VERSION"
  } >"$mod/go.mod"
  log "building etcd $ETCD_VERSION"
  local t0=$SECONDS
  (cd "$mod" && go build "${build_flags[@]}" -ldflags "-s -w" \
    -o "$work/out-etcd/etcd" go.etcd.io/etcd/server/v3)
  mv -f "$work/out-etcd/etcd" "$bin/etcd"
  log "built etcd in $((SECONDS - t0)) s"
}

start=$SECONDS
if have etcd "etcd Version: ${ETCD_VERSION#v}"; then log "etcd $ETCD_VERSION is cached"; else build_etcd; fi
if have kube-apiserver "Kubernetes $K8S_VERSION" && have kube-controller-manager "Kubernetes $K8S_VERSION"; then
  log "Kubernetes $K8S_VERSION is cached"
else
  build_kubernetes
fi
log "done in $((SECONDS - start)) s: $bin"
echo "$bin"
