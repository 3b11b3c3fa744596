#!/usr/bin/env bash
# make images: builds every image of docker/images.txt from its Dockerfile, without Docker or a
# registry (docs/adr/0005-images-without-a-registry.md), into dist/images/<name>.oci.tar.
#
#   docker/build-images.sh [LIST]    LIST: docker/images.txt (the default; make images) or
#                                    docker/images-full.txt (make images-full)
#
#   1. the base `debian:bookworm-slim` the Dockerfiles name: made with mmdebstrap
#      (docker/base-image.sh) and stored under that name, once per recipe; or, with
#      FOLIO_IMAGES_BASE=pull, pulled from Docker Hub (where a registry is reachable);
#   2. each image: its build context (docker/context.ts: the files its .dockerignore admits) and
#      a key over that context, the Dockerfile, the base and the version. When the archive's key is
#      the same, nothing is built (a second `make images` takes seconds). Otherwise
#      `buildah bud --format docker` (docker format: OCI images drop SHELL, and the RUN lines are
#      bash) with the layer cache, the machine's CA bundle and an npmrc naming it bind-mounted into
#      the RUN steps only (npm's HTTPS goes through the machine's extra certificate authorities;
#      nothing of them lands in a layer but the empty files buildah leaves where it mounted them),
#      and likewise the machine's Java trust store with a mavenrc naming it (Maven, in the full
#      runner image's veraPDF stage), then `skopeo copy` to an OCI archive tagged
#      docker.io/<repository>:<chart appVersion>. An image layered on another of ours (a fifth
#      column ARG=name) gets that image's id as the build argument ARG, and the id is in its key;
#   3. sizes: the image's size, the archive's, and what dominates (largest directories), written
#      to dist/images/<name>.json and printed.
#
# Container storage, the base's tarball and the contexts live in FOLIO_IMAGES_CACHE
# (~/.cache/folio-images); podman and buildah use runc (crun refuses this host's hybrid cgroups)
# and lower default rlimits (root lacks CAP_SYS_RESOURCE here): see $cache/containers.conf.
# One build at a time per machine (flock): the storage is shared by every checkout.
set -euo pipefail
list="${1:-docker/images.txt}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
export PATH="$root/.tools/node/bin:$PATH"
say() { printf '\033[1mimages:\033[0m %s\n' "$*" >&2; }
die() { printf '\033[31mimages: %s\033[0m\n' "$*" >&2; exit 1; }

for tool in buildah:buildah podman:podman skopeo:skopeo mmdebstrap:mmdebstrap runc:runc; do
  command -v "${tool%%:*}" >/dev/null || die "${tool%%:*} is missing: install the Debian package ${tool#*:} (make setup does)"
done

cache="${FOLIO_IMAGES_CACHE:-$HOME/.cache/folio-images}"
mkdir -p "$cache"
cat >"$cache/storage.conf" <<EOF
[storage]
driver = "overlay"
graphroot = "$cache/storage"
runroot = "$cache/run"
EOF
cat >"$cache/containers.conf" <<'EOF'
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
EOF
export CONTAINERS_STORAGE_CONF="$cache/storage.conf" CONTAINERS_CONF="$cache/containers.conf"
exec 9>"$cache/lock"
flock 9

version="$(awk '/^appVersion:/ { gsub(/"/, "", $2); print $2 }' helm/folio/Chart.yaml)"
[ -n "$version" ] || die "no appVersion in helm/folio/Chart.yaml"
revision="$(git rev-parse HEAD 2>/dev/null || echo unknown)"
[ -z "$(git status --porcelain 2>/dev/null)" ] || revision="$revision-dirty"
source_url="$(git remote get-url origin 2>/dev/null || true)"
ca="${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}"
printf 'cafile=/etc/ssl/host-ca.crt\nregistry=%s\n' "$(npm config get registry 2>/dev/null || echo https://registry.npmjs.org/)" >"$cache/npmrc"
# Java does not read PEM bundles: for a Dockerfile that runs Maven, the machine's own Java trust
# store (ca-certificates-java), when it has one; Debian's mvn sources /etc/mavenrc.
java_ca=/etc/ssl/certs/java/cacerts
printf 'MAVEN_OPTS="$MAVEN_OPTS -Djavax.net.ssl.trustStore=/etc/ssl/host-java-cacerts"\n' >"$cache/mavenrc"
mkdir -p dist/images

# --- 1. the base ----------------------------------------------------------------------------------
if [ "${FOLIO_IMAGES_BASE:-mmdebstrap}" = pull ]; then
  say "base: pulling docker.io/library/debian:bookworm-slim"
  podman pull --quiet docker.io/library/debian:bookworm-slim >/dev/null
else
  base_key="$(cat docker/base-image.sh /etc/apt/sources.list.d/debian.sources 2>/dev/null | sha256sum | cut -c1-16)"
  base_ref="localhost/folio-base:$base_key"
  if ! podman image exists "$base_ref"; then
    tar="$cache/base-$base_key.tar"
    if [ ! -f "$tar" ]; then
      say "base: mmdebstrap bookworm (minbase, slim) — about a minute; log in $cache/base.log"
      started=$SECONDS
      docker/base-image.sh "$tar" >"$cache/base.log" 2>&1 || { tail -n 30 "$cache/base.log" >&2; die "the base image could not be made"; }
      say "base: made in $((SECONDS - started)) s ($(du -m "$tar" | cut -f1) MB)"
    fi
    podman import --quiet --change 'CMD ["bash"]' \
      --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' "$tar" "$base_ref" >/dev/null
  fi
  # The name the Dockerfiles use, fully qualified, so that --pull=never finds it.
  podman tag "$base_ref" docker.io/library/debian:bookworm-slim
fi
base_id="$(podman image inspect --format '{{.Id}}' docker.io/library/debian:bookworm-slim)"

# --- 2. the images --------------------------------------------------------------------------------
script_key="$(cat docker/build-images.sh | sha256sum | cut -c1-16)"
built_any=0
while read -r name dockerfile repository budget layered_on; do
  [ -n "$name" ] && [ "${name:0:1}" != "#" ] || continue
  archive="dist/images/$name.oci.tar"
  meta="dist/images/$name.json"
  ref="docker.io/$repository:$version"
  # ARG=name: the image `name` of this checkout (its id, not its tag: the storage is shared with
  # other checkouts, which tag their own builds alike), built first.
  from_args=()
  from_id=""
  if [ -n "${layered_on:-}" ]; then
    from_meta="dist/images/${layered_on#*=}.json"
    [ -f "$from_meta" ] || die "$name is built on ${layered_on#*=}: run make images first"
    from_id="$(node -p "JSON.parse(require('fs').readFileSync('$from_meta', 'utf8')).image_id")"
    podman image exists "$from_id" || die "$name is built on ${layered_on#*=} ($from_id), which is no longer in $cache: run make images again"
    from_args=(--build-arg "${layered_on%%=*}=$from_id")
  fi
  trust=(-v "$ca:/etc/ssl/host-ca.crt:ro" -v "$cache/npmrc:/root/.npmrc:ro")
  if [ -f "$java_ca" ] && grep -q '\bmvn\b' "$dockerfile"; then
    trust+=(-v "$java_ca:/etc/ssl/host-java-cacerts:ro" -v "$cache/mavenrc:/etc/mavenrc:ro")
  fi
  context_key="$(node docker/context.ts "$dockerfile" "$cache/context/$name")"
  key="$(printf '%s %s %s %s %s' "$context_key" "$base_id" "$version" "$script_key" "$from_id" | sha256sum | cut -c1-32)"
  # Up to date: the archive of this key, and its image still in the storage (an image layered on
  # it needs it; step 4 may have pruned it).
  if [ -f "$archive" ] && [ -f "$meta" ] && [ "$(node -p "JSON.parse(require('fs').readFileSync('$meta', 'utf8')).key")" = "$key" ] \
    && podman image exists "$(node -p "JSON.parse(require('fs').readFileSync('$meta', 'utf8')).image_id")"; then
    say "$name: up to date ($archive, $ref)"
    node -e 'const m = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); console.error(`  ${m.size_mb} MB (archive ${m.archive_mb} MB), largest: ${m.largest.slice(0, 6).map((d) => `${d.path} ${d.mb} MB`).join(", ")}`)' "$meta"
    continue
  fi
  say "$name: building $dockerfile → $ref"
  built_any=1
  started=$SECONDS
  labels=()
  [ -z "$source_url" ] || labels=(--label "org.opencontainers.image.source=$source_url")
  rm -f "$cache/$name.iid"
  nice -n 10 buildah bud --quiet --format docker --layers --pull=never --network host "${trust[@]}" "${from_args[@]}" \
    --build-arg VERSION="$version" --build-arg REVISION="$revision" --build-arg CREATED="$(date -u +%FT%TZ)" \
    "${labels[@]}" --iidfile "$cache/$name.iid" -t "localhost/$repository:$version" \
    -f "$root/$dockerfile" "$cache/context/$name" >"$cache/$name.build.log" 2>&1 \
    || { tail -n 40 "$cache/$name.build.log" >&2; die "$name: buildah bud failed (log: $cache/$name.build.log)"; }
  built=$SECONDS
  iid="$(sed "s/^sha256://" "$cache/$name.iid")"
  rm -f "$archive" "$meta"
  # gzip level 1: a third of the time of the default level for ~10 % more bytes.
  nice -n 10 skopeo copy --quiet --dest-compress-level 1 "containers-storage:$iid" "oci-archive:$archive.partial:$ref"
  mv "$archive.partial" "$archive"
  # What the image is made of: its size, and the directories that dominate it.
  size="$(podman image inspect --format '{{.Size}}' "$iid")"
  mnt="$(podman image mount "$iid")"
  largest="$(cd "$mnt" && du -x -m -d 3 . 2>/dev/null | sort -rn | awk 'NR > 1 && n < 12 { sub(/^\.\//, "/", $2); printf "%s%s\t%s", (n++ ? "\n" : ""), $1, $2 }')"
  podman image unmount "$iid" >/dev/null
  # The archive's config digest (skopeo converts the manifest to OCI, so it is not the image id):
  # test/images matches it against the archive it inspects, so the size recorded here is that image's.
  config_digest="$(skopeo inspect --raw "oci-archive:$archive" | node -p 'JSON.parse(require("fs").readFileSync(0, "utf8")).config.digest')"
  node -e '
    const [file, key, ref, iid, configDigest, size, archiveBytes, budget, built, exported, largest] = process.argv.slice(1);
    const mb = (n) => Math.round(Number(n) / 1e6);
    // Top directories, without those that only contain a bigger one listed already.
    const dirs = largest.split("\n").filter(Boolean).map((l) => { const [m, p] = l.split("\t"); return { path: p, mb: Number(m) }; });
    const meta = { key, ref, image_id: iid, config_digest: configDigest, size_mb: mb(size), archive_mb: mb(archiveBytes), budget_mb: Number(budget),
      build_seconds: Number(built), export_seconds: Number(exported), largest: dirs };
    require("fs").writeFileSync(file, JSON.stringify(meta, null, 2) + "\n");
  ' "$meta" "$key" "$ref" "$iid" "$config_digest" "$size" "$(stat -c %s "$archive")" "$budget" "$((built - started))" "$((SECONDS - built))" "$largest"
  say "$name: built in $((built - started)) s, archived in $((SECONDS - built)) s: $(node -p "JSON.parse(require('fs').readFileSync('$meta','utf8')).size_mb") MB (budget $budget MB), archive $(du -m "$archive" | cut -f1) MB"
  printf '%s\n' "$largest" | sed 's/^/    /' >&2
done <"$list"

# --- 4. the storage's bound -----------------------------------------------------------------------
# Every build leaves the image it replaces behind, untagged (1–2 GB each). Past
# FOLIO_IMAGES_CACHE_MAX_GB (default 20) of storage, every image no tag names goes: the previous
# builds, and the step images of the layer cache with them (measured: 8.5 GB → 1.9 GB), so the
# build after a prune is a cold one (about 6 min for the runner). Tagged images stay; another
# checkout whose image was pruned keeps its archive (dist/images) and rebuilds the image at its
# next `make images`.
if [ "$built_any" = 1 ]; then
  used_mb="$(du -sm "$cache/storage" | cut -f1)"
  if [ "$used_mb" -gt $((${FOLIO_IMAGES_CACHE_MAX_GB:-20} * 1024)) ]; then
    # Working containers left by builds that were killed (none runs now: we hold the lock) pin
    # their images.
    buildah rm --all >/dev/null 2>&1 || true
    podman image prune --force >/dev/null 2>"$cache/prune.log" || say "storage: the prune stopped early (log: $cache/prune.log)"
    say "storage: $((used_mb / 1024)) GB was over ${FOLIO_IMAGES_CACHE_MAX_GB:-20} GB; pruned untagged images: $(($(du -sm "$cache/storage" | cut -f1) / 1024)) GB now"
  fi
fi
