#!/usr/bin/env bash
# The experiment of docs/adr/0006-local-kubelet-over-real-kubelet.md, step 2: a real containerd and
# a real kubelet (build.sh) as the node of a running local control plane, with the workarounds this
# host needs. Run the control plane without its own kubelet first:
#
#   node test/k8s/start.ts --no-kubelet --write-env /tmp/k8s.env &   # then: source /tmp/k8s.env
#   test/k8s/real-kubelet/run.sh DIR                                 # until Ctrl-C
#
# Workarounds (each one found by trying):
#   - kubelet: failCgroupV1: false (1.35+ refuses cgroup v1 by default; this host is hybrid v1);
#   - containerd: the CRI's sandbox image registry.k8s.io/pause cannot be pulled (no registry): a
#     local one (`sleep infinity` on the mmdebstrap base) is imported under that name;
#   - containerd: restrict_oom_score_adj = true — root here lacks CAP_SYS_RESOURCE, so the
#     sandbox's oom_score_adj of -998 fails runc's init ("can't get final child's PID from pipe");
#   - CNI: the plugins Debian installs with podman live in /usr/lib/cni (not /opt/cni/bin); a
#     bridge network of its own (no NetworkPolicy enforcement: the bridge plugin has none).
set -euo pipefail
dir="${1:?usage: run.sh DIR}"
: "${FOLIO_K8S_DIR:?source the env file of test/k8s/start.ts first}"
bin="$("$(dirname "${BASH_SOURCE[0]}")/build.sh" | tail -n1)"
mkdir -p "$dir"/{root,state,kubelet,logs,cni}
cat >"$dir/cni/10-folio.conflist" <<'EOF'
{"cniVersion":"1.0.0","name":"folio","plugins":[{"type":"bridge","bridge":"folio0","isGateway":true,"ipMasq":true,
 "ipam":{"type":"host-local","ranges":[[{"subnet":"10.89.0.0/24"}]],"routes":[{"dst":"0.0.0.0/0"}]}},{"type":"portmap","capabilities":{"portMappings":true}}]}
EOF
cat >"$dir/containerd.toml" <<EOF
version = 3
root = "$dir/root"
state = "$dir/state"
[grpc]
  address = "$dir/containerd.sock"
[plugins."io.containerd.cri.v1.runtime"]
  restrict_oom_score_adj = true
  [plugins."io.containerd.cri.v1.runtime".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
        BinaryName = "/usr/sbin/runc"
        SystemdCgroup = false
  [plugins."io.containerd.cri.v1.runtime".cni]
    bin_dirs = ["/usr/lib/cni"]
    conf_dir = "$dir/cni"
[plugins."io.containerd.cri.v1.images"]
  snapshotter = "overlayfs"
EOF
cat >"$dir/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://$dir/containerd.sock
authentication: {anonymous: {enabled: false}, webhook: {enabled: false}}
authorization: {mode: AlwaysAllow}
address: 127.0.0.1
port: 0
readOnlyPort: 0
healthzPort: 0
resolvConf: /etc/resolv.conf
EOF
PATH="$bin:$PATH" "$bin/containerd" --config "$dir/containerd.toml" >"$dir/logs/containerd.log" 2>&1 &
containerd=$!
trap 'kill "${kubelet:-}" 2>/dev/null; kill "$containerd" 2>/dev/null; wait' EXIT
until [ -S "$dir/containerd.sock" ]; do sleep 0.5; done
ctr=("$bin/ctr" --address "$dir/containerd.sock" -n k8s.io)
# The sandbox ("pause") image, and the images make images built.
export CONTAINERS_STORAGE_CONF="${FOLIO_IMAGES_CACHE:-$HOME/.cache/folio-images}/storage.conf"
printf 'FROM docker.io/library/debian:bookworm-slim\nENTRYPOINT ["/bin/sleep", "infinity"]\n' >"$dir/Containerfile"
buildah bud --quiet --format docker --pull=never -t registry.k8s.io/pause:3.10.2 -f "$dir/Containerfile" "$dir" >/dev/null
skopeo copy --quiet containers-storage:registry.k8s.io/pause:3.10.2 "oci-archive:$dir/pause.tar:registry.k8s.io/pause:3.10.2"
for archive in "$dir/pause.tar" dist/images/*.oci.tar; do "${ctr[@]}" images import "$archive" >/dev/null; done
PATH="$bin:$PATH" "$bin/kubelet" --config "$dir/kubelet.yaml" --kubeconfig "$FOLIO_K8S_DIR/node.kubeconfig" \
  --hostname-override folio-local-node --root-dir "$dir/kubelet" >"$dir/logs/kubelet.log" 2>&1 &
kubelet=$!
echo "real kubelet $kubelet and containerd $containerd running; logs in $dir/logs (Ctrl-C stops)"
wait "$kubelet"
