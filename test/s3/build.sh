#!/usr/bin/env bash
# Builds a real S3-compatible server for the tests — MinIO, with `go install` from the Go module
# proxy at the version pinned below — into a cache outside the checkout:
#
#   ${FOLIO_S3_CACHE:-$HOME/.cache/folio-s3}/<MINIO_VERSION>/minio
#
# Idempotent: a binary that is already there (and reports the pinned commit) is not rebuilt, so CI
# and the test targets can call this unconditionally. Prints the binary's path as its last line.
#
# MinIO tags its releases RELEASE.<date> (not semver), so the proxy only knows pseudo-versions; we
# pin one by commit. Its go.mod has no replace directives, so `go install module@version` works
# as is (no throwaway module needed, unlike test/k8s/build.sh). The version strings MinIO prints
# (`minio --version`) are set through ldflags the way its buildscripts/gen-ldflags.go does.
#
# Environment: FOLIO_S3_CACHE (cache root), GOCACHE/GOMODCACHE (Go's own caches; pass fresh
# directories to measure a cold build), FOLIO_S3_FORCE=1 (rebuild even if present).
set -euo pipefail

# The newest MinIO source on the proxy (2026-02-12; the community repository is archived).
MINIO_MODULE=github.com/minio/minio
MINIO_VERSION=v0.0.0-20260212201848-7aac2a2c5b7c
MINIO_COMMIT=7aac2a2c5b7c
MINIO_DATE=2026-02-12T20:18:48Z
GO_MIN_VERSION=1.24

cache_root="${FOLIO_S3_CACHE:-$HOME/.cache/folio-s3}"
dir="$cache_root/$MINIO_VERSION"
bin="$dir/minio"
mkdir -p "$dir"

log() { printf '[s3-build] %s\n' "$*" >&2; }

command -v go >/dev/null || { log "go is not installed (need Go >= $GO_MIN_VERSION)"; exit 2; }
go_version="$(go env GOVERSION)"
if [ "$(printf '%s\n%s\n' "go$GO_MIN_VERSION" "$go_version" | sort -V | head -n1)" != "go$GO_MIN_VERSION" ]; then
  log "$go_version is too old: MinIO $MINIO_VERSION needs Go >= $GO_MIN_VERSION"; exit 2
fi

# One build at a time per cache.
exec 9>"$dir/.lock"
flock 9

have() {
  local out
  [ -z "${FOLIO_S3_FORCE:-}" ] && [ -x "$bin" ] && out="$("$bin" --version 2>/dev/null)" && [[ $out == *"$MINIO_COMMIT"* ]]
}

if have; then
  log "MinIO $MINIO_VERSION is cached"
  echo "$bin"
  exit 0
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/folio-s3-build.XXXXXX")"
trap 'rm -rf "$work"' EXIT

export CGO_ENABLED=0 GOTOOLCHAIN="${GOTOOLCHAIN:-local}" GOWORK=off GOFLAGS= GOBIN="$work/bin"
tag="DEVELOPMENT.${MINIO_DATE//:/-}"
pkg=github.com/minio/minio/cmd
ld="-s -w -X $pkg.Version=$MINIO_DATE -X $pkg.CopyrightYear=${MINIO_DATE:0:4} -X $pkg.ReleaseTag=$tag"
ld+=" -X $pkg.CommitID=$MINIO_COMMIT -X $pkg.ShortCommitID=$MINIO_COMMIT"

log "building MinIO $MINIO_VERSION (cold: downloads ~300 modules and compiles them)"
t0=$SECONDS
go install -trimpath -p 2 -ldflags "$ld" "$MINIO_MODULE@$MINIO_VERSION"
mv -f "$work/bin/minio" "$bin"
log "built MinIO in $((SECONDS - t0)) s: $bin"
echo "$bin"
