#!/usr/bin/env bash
# The base image the Dockerfiles name, `debian:bookworm-slim`, made here from the Debian mirror
# with mmdebstrap, because no registry is reachable (docs/adr/0005-images-without-a-registry.md).
#
#   docker/base-image.sh TARBALL      writes the root file system as a tar (~80 MB, ~50 s)
#
# It is made the way the official image is (debuerreotype's "slim" variant): Debian bookworm,
# variant minbase (Essential + apt), merged /usr, and dpkg told never to install documentation,
# manual pages or translations (those rules stay in the image, so the packages the Dockerfiles
# install later are slim too: /etc/dpkg/dpkg.cfg.d/99mmdebstrap). The apt settings of the official
# image come along: no package lists or .deb files kept after apt runs, no translations fetched,
# Suggests not kept by autoremove. machine-id, hostname and resolv.conf are emptied; the runtime
# provides them.
#
# Sources: the machine's own Debian sources (/etc/apt/sources.list.d/debian.sources when present),
# else deb.debian.org. The result is not bit-for-bit reproducible: the mirror moves.
set -euo pipefail
out="${1:?usage: docker/base-image.sh TARBALL}"
command -v mmdebstrap >/dev/null || { echo "base-image: mmdebstrap is missing (Debian package mmdebstrap; make setup installs it)" >&2; exit 2; }

sources=()
if [ -f /etc/apt/sources.list.d/debian.sources ]; then
  sources=(/etc/apt/sources.list.d/debian.sources)
else
  sources=("deb http://deb.debian.org/debian bookworm main" "deb http://deb.debian.org/debian bookworm-updates main"
    "deb http://deb.debian.org/debian-security bookworm-security main")
fi

# The official slim image's dpkg filter (debuerreotype's .slimify): copyright files stay, for
# the licences' sake.
dpkg_opts=(
  'path-exclude=/usr/share/doc/*' 'path-include=/usr/share/doc/*/copyright'
  'path-exclude=/usr/share/man/*' 'path-exclude=/usr/share/groff/*' 'path-exclude=/usr/share/info/*'
  'path-exclude=/usr/share/lintian/*' 'path-exclude=/usr/share/linda/*' 'path-exclude=/usr/share/locale/*'
)
dpkgopt_args=()
for o in "${dpkg_opts[@]}"; do dpkgopt_args+=(--dpkgopt="$o"); done

# The official image's /etc/apt/apt.conf.d/docker-clean: downloaded .debs and apt's binary caches
# never stay behind (otherwise every `apt-get install` layer keeps its .debs).
read -r -d '' docker_clean <<'EOF' || true
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF

tmp="$out.partial"
rm -f "$tmp"
mmdebstrap --quiet --variant=minbase --mode=root --format=tar --arch=amd64 \
  --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
  "${dpkgopt_args[@]}" \
  --aptopt='Acquire::Languages "none"' \
  --aptopt='Apt::AutoRemove::SuggestsImportant "false"' \
  --customize-hook="printf '%s\n' '$docker_clean' > \"\$1/etc/apt/apt.conf.d/docker-clean\"" \
  --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/* "$1"/var/log/apt/* "$1"/var/log/dpkg.log "$1"/var/log/alternatives.log "$1"/var/cache/ldconfig/aux-cache' \
  --customize-hook='for f in machine-id hostname resolv.conf; do : > "$1/etc/$f"; chmod 0644 "$1/etc/$f"; done' \
  bookworm "$tmp" "${sources[@]}"
mv "$tmp" "$out"
