#!/usr/bin/env bash
# make chart-test: everything issue #5 asks of the Helm chart, the images and the alerts.
#
#   1. tools        helm, promtool, hadolint, the Prometheus Operator CRDs (tools.sh; cached
#                   outside the checkout, installed when missing)
#   2. static       test/chart/check.ts: CRD copy fresh, alerts ↔ runbooks ↔ promtool cases,
#                   metric names, dashboard JSON, Dockerfiles ↔ bin/debian-packages.txt
#   3. dockerfiles  hadolint on docker/api.Dockerfile, docker/runner.Dockerfile and docker/runner-full.Dockerfile
#   4. alerts       promtool check rules (alerts + every dashboard query) and promtool test rules
#   5. chart        helm lint (default and full values), helm template (default and full),
#                   the default API stateless and highly available (test/chart/stateless.ts),
#                   helm package, the rendered PrometheusRule = files/alerts.yaml, and values
#                   the schema must reject; the `helm test` hook's script run against a real
#                   `folio serve` (HTTPS, self-signed certificate)
#   6. cluster      the real control plane of test/k8s (plus deployment, replicaset and
#                   disruption controllers, OwnerReferencesPermissionEnforcement) and a MinIO
#                   (test/chart/platform.ts): every rendered manifest server-side dry-run
#                   (strict field validation + admission, PodSecurity `restricted` enforced and
#                   warned) — then helm install into a `restricted` namespace, objects and pods
#                   admitted, RBAC least privilege by SubjectAccessReview, a runner pod of the
#                   controller's Job template admitted and selected by the NetworkPolicy, helm
#                   upgrade with a changed value, helm uninstall, the CRD still there; the
#                   default values installed and uninstalled (their images are not mapped: the
#                   pods are admitted, not run).
#   7. live         a release whose pods run (values-live.yaml; test/chart/live.ts): the API
#                   (`folio serve`, Kubernetes mode) and the controller (`folio controller`) as
#                   containers of the images `make images` built (runc, on the local kubelet),
#                   acting as their ServiceAccounts; Deployments Available, every probe answers,
#                   the controller holds the Lease, `helm test` passes in the cluster, one merge
#                   through the API → PdfJob → controller → runner pod (presigned URLs only) → S3 →
#                   download and a signed webhook, DELETE; helm uninstall.
#
# Exit status non-zero on any failure. FOLIO_CHART_TEST_K8S=0 skips steps 6 and 7 (for a quick local
# run; CI never sets it). Timings of every step are printed at the end.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
export PATH="$root/.tools/node/bin:$root/node_modules/.bin:$PATH"
chart=helm/folio
full=test/chart/values-full.yaml
release=acme            # not containing "folio": resource names are acme-folio-*
fullname=acme-folio
out="$(mktemp -d "${TMPDIR:-/tmp}/folio-chart-test.XXXXXX")"
platform_pid=""
serve_pid=""

cleanup() {
  if [ -n "$serve_pid" ]; then kill -TERM "$serve_pid" 2>/dev/null || true; fi
  if [ -n "$platform_pid" ] && kill -0 "$platform_pid" 2>/dev/null; then
    kill -TERM "$platform_pid" 2>/dev/null || true
    wait "$platform_pid" 2>/dev/null || true
  fi
  rm -rf "$out"
}
trap cleanup EXIT

started=$SECONDS
timings=()
step_started=$SECONDS
step() {
  if [ -n "${step_name:-}" ]; then timings+=("$(printf '%-12s %4d s' "$step_name" $((SECONDS - step_started)))"); fi
  step_name="$1"; step_started=$SECONDS; shift
  printf '\n\033[1m== %s\033[0m\n' "$*"
}
free_port() { node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })'; }
die() { printf '\033[31mchart-test: %s\033[0m\n' "$*" >&2; exit 1; }
# expect_fail WHAT PATTERN CMD...: CMD must fail and say PATTERN.
expect_fail() {
  local what="$1" pattern="$2"; shift 2
  local log
  if log="$("$@" 2>&1)"; then die "$what: accepted, should have been rejected"; fi
  grep -qiE -- "$pattern" <<<"$log" || die "$what: rejected, but without /$pattern/: $log"
  echo "  ok    rejected: $what"
}

# --- 1. tools -------------------------------------------------------------------------------------
step tools "tools (cache: ${FOLIO_TOOLS_CACHE:-$HOME/.cache/folio-tools})"
eval "$(test/chart/tools.sh)"
echo "  $(helm version --short)   $(promtool --version 2>&1 | head -n1)   $(hadolint --version)"

# --- 2. static checks -----------------------------------------------------------------------------
step static "static checks"
node test/chart/check.ts "$out/dashboard-queries.yaml"

# --- 3. Dockerfiles -------------------------------------------------------------------------------
step hadolint "hadolint"
hadolint --failure-threshold style docker/api.Dockerfile docker/runner.Dockerfile docker/runner-full.Dockerfile
echo "  ok    docker/api.Dockerfile docker/runner.Dockerfile docker/runner-full.Dockerfile: no findings"

# --- 4. alerts ------------------------------------------------------------------------------------
step promtool "promtool"
promtool check rules "$chart/files/alerts.yaml" "$out/dashboard-queries.yaml"
promtool test rules test/chart/alerts.test.yaml

# --- 5. the chart, offline ------------------------------------------------------------------------
step chart "helm lint, template, package, schema"
helm lint --strict "$chart"
helm lint --strict "$chart" -f "$full"
helm template "$release" "$chart" --namespace folio-dry --include-crds >"$out/default.yaml"
helm template "$release" "$chart" --namespace folio-dry --include-crds -f "$full" >"$out/full.yaml"
for f in default full; do echo "  ok    $f values: $(grep -c '^kind:' "$out/$f.yaml") objects ($(grep '^kind:' "$out/$f.yaml" | sort | uniq -c | awk '{printf "%s%s×%s", sep, $3, $1; sep=", "}'))"; done
grep -q '^kind: PrometheusRule' "$out/default.yaml" && die "the default values render a PrometheusRule (it must be opt-in)"
node test/chart/stateless.ts "$out/default.yaml"
helm template "$release" "$chart" --namespace folio-dry --set images.runnerFull=null | grep -q FOLIO_RUNNER_FULL_IMAGE &&
  die "images.runnerFull=null still sets FOLIO_RUNNER_FULL_IMAGE"
echo "  ok    images.runnerFull=null: every job runs images.runner (no FOLIO_RUNNER_FULL_IMAGE)"
node test/chart/check.ts --prometheusrule "$out/full.yaml" "$out/rendered-rules.yaml"
promtool check rules "$out/rendered-rules.yaml"
helm package "$chart" --destination "$out" >/dev/null
pkg="$(ls "$out"/folio-*.tgz)"
for crd in pdfjobs tenants accessrequests; do
  helm show crds "$pkg" | grep -q "name: $crd.folio.dev" || die "the packaged chart lacks the $crd CRD"
done
echo "  ok    packaged $(basename "$pkg") ($(du -k "$pkg" | cut -f1) KiB) with crds/{pdfjobs,tenants,accessrequests}.folio.dev.yaml"
expect_fail "a misspelt key (api.replicaz)" "replicaz" helm template x "$chart" --set api.replicaz=2
expect_fail "a misspelt nested key (storage.s3.bukket)" "bukket" helm template x "$chart" --set storage.s3.bukket=x
expect_fail "retention beyond 24 h" "jobSeconds" helm template x "$chart" --set config.retention.jobSeconds=90000
expect_fail "an invalid bucket name" "bucket" helm template x "$chart" --set storage.s3.bucket=Not_A_Bucket
expect_fail "a negative maxRunningJobs" "maxRunningJobs" helm template x "$chart" --set controller.maxRunningJobs=-1
expect_fail "two controllers without leader election" "enabled" helm template x "$chart" --set controller.leaderElection.enabled=false
expect_fail "a wrong type (workers: many)" "workers" helm template x "$chart" --set controller.workers=many
expect_fail "an unknown pull policy" "pullPolicy" helm template x "$chart" --set images.pullPolicy=Sometimes
expect_fail "a test URL that is not https://host:port" "url" helm template x "$chart" --set tests.url=http://folio-api/
expect_fail "an extra volume mount without a path" "mountPath" helm template x "$chart" --set 'api.extraVolumeMounts[0].name=x'
expect_fail "the API's metrics port equal to its port" "api.metricsPort must differ from api.port" helm template x "$chart" --set api.metricsPort=8443

# The `helm test` hook's script, run as its pod would run it, against the real API server
# (`folio serve` from the checkout on a free port, with its generated self-signed certificate).
step hook "helm test hook script against a real API server"
hook_script="$(node -e '
  const { loadAll } = require("js-yaml");
  const pod = loadAll(require("fs").readFileSync(process.argv[1], "utf8")).find((d) => d && d.kind === "Pod");
  const c = pod.spec.containers[0];
  if (c.command[0] !== "node" || c.command.at(-2) !== "-e") throw new Error("unexpected hook command " + c.command.slice(0, 3));
  process.stdout.write(c.command.at(-1));' "$out/default.yaml")"
port="$(free_port)"
FOLIO_WORKERS=1 node bin/folio.ts serve --port "$port" --data-dir "$out/api-data" >"$out/serve.log" 2>&1 &
serve_pid=$!
if FOLIO_URL="https://localhost:$port" NODE_TLS_REJECT_UNAUTHORIZED=0 NODE_NO_WARNINGS=1 \
    node --input-type=module -e "$hook_script" | sed 's/^/  /'; then
  echo "  ok    the hook passes against a running API"
else
  kill -TERM "$serve_pid"; cat "$out/serve.log"; die "the helm test hook failed against a running API"
fi
kill -TERM "$serve_pid"; wait "$serve_pid" || true; serve_pid=""

if [ "${FOLIO_CHART_TEST_K8S:-1}" = 0 ]; then
  step skipped "cluster steps SKIPPED (FOLIO_CHART_TEST_K8S=0)"
else
  # --- 6. the real control plane ------------------------------------------------------------------
  step k8s-start "start the control plane and MinIO (test/k8s, test/s3; builds the control plane if the cache is empty)"
  test/s3/build.sh >/dev/null   # MinIO for the live release: cached in ~/.cache/folio-s3, built when missing
  node test/chart/platform.ts --write-env "$out/k8s.env" 2>"$out/platform.log" &
  platform_pid=$!
  until [ -s "$out/k8s.env" ]; do
    kill -0 "$platform_pid" 2>/dev/null || { cat "$out/platform.log" >&2; die "the control plane did not start"; }
    sleep 1
  done
  # shellcheck disable=SC1091
  source "$out/k8s.env"
  grep -E 'ready in' "$out/platform.log" | sed 's/^/  /'

  step dry-run "server-side dry run of every rendered manifest"
  node test/chart/kube.ts namespace folio-dry pod-security.kubernetes.io/enforce=restricted \
    pod-security.kubernetes.io/warn=restricted pod-security.kubernetes.io/audit=restricted
  # The Prometheus Operator's CRDs, so that ServiceMonitor and PrometheusRule are validated by
  # their real schemas. The PdfJob CRD is left to helm install (and dry-run from the manifests).
  node test/chart/kube.ts apply "$FOLIO_MONITORING_CRDS"/*.yaml
  echo "-- default values"
  node test/chart/kube.ts dry-run folio-dry "$out/default.yaml"
  echo "-- full values"
  node test/chart/kube.ts dry-run folio-dry "$out/full.yaml"
  echo "-- the dry run refuses broken objects"
  node test/chart/kube.ts self-test folio-dry "$out/full.yaml"

  step install "helm install into a namespace enforcing PodSecurity restricted"
  ns=folio-chart
  node test/chart/kube.ts namespace "$ns" pod-security.kubernetes.io/enforce=restricted \
    pod-security.kubernetes.io/warn=restricted pod-security.kubernetes.io/audit=restricted
  helm install "$release" "$chart" --namespace "$ns" -f "$full" --timeout 2m >"$out/install.log" \
    || { cat "$out/install.log"; die "helm install failed"; }
  sed -n '1,/^NOTES:/p' "$out/install.log" | sed 's/^/  /'
  helm get manifest "$release" -n "$ns" >"$out/installed.yaml"
  node test/chart/kube.ts installed "$ns" "$out/installed.yaml"
  node test/chart/kube.ts rbac "$ns" "$fullname"
  node test/chart/kube.ts runner-pod "$ns" "$fullname" "registry.example.com/acme/folio/runner:0.1.0"

  step upgrade "helm upgrade with a changed value"
  helm upgrade "$release" "$chart" --namespace "$ns" -f "$full" --set controller.workers=12 --timeout 2m >/dev/null
  [ "$(helm history "$release" -n "$ns" -o json | node -p 'JSON.parse(require("fs").readFileSync(0)).length')" = 2 ] || die "helm history does not show 2 revisions"
  echo "  ok    revision 2 deployed"
  node test/chart/kube.ts rollout "$ns" "$fullname-controller" controller FOLIO_CONTROLLER_WORKERS=12

  step uninstall "helm uninstall (the CRD stays)"
  helm get manifest "$release" -n "$ns" >"$out/installed.yaml"
  helm uninstall "$release" --namespace "$ns" --wait --timeout 2m >/dev/null
  node test/chart/kube.ts uninstalled "$ns" "$out/installed.yaml"

  # The default values as most admins will install them: release "folio" (resources folio-*),
  # three API replicas (no volume), two controllers.
  step defaults "helm install, uninstall with the default values"
  ns=folio-default
  node test/chart/kube.ts namespace "$ns" pod-security.kubernetes.io/enforce=restricted \
    pod-security.kubernetes.io/warn=restricted pod-security.kubernetes.io/audit=restricted
  helm install folio "$chart" --namespace "$ns" --timeout 2m >/dev/null
  helm get manifest folio -n "$ns" >"$out/installed-default.yaml"
  node test/chart/kube.ts installed "$ns" "$out/installed-default.yaml"
  node test/chart/kube.ts rbac "$ns" folio
  helm uninstall folio --namespace "$ns" --wait --timeout 2m >/dev/null
  node test/chart/kube.ts uninstalled "$ns" "$out/installed-default.yaml"

  # The live release: the default values plus values-live.yaml; its pods run (the built images,
  # loaded as folio.test/…), reach the MinIO of platform.ts, and act as their ServiceAccounts
  # (live.ts kubeconfigs). Fixed ports would clash on the host's network.
  step live-install "live release: install (its pods run on the local kubelet)"
  ns=folio-live
  node test/chart/kube.ts namespace "$ns" pod-security.kubernetes.io/enforce=restricted \
    pod-security.kubernetes.io/warn=restricted pod-security.kubernetes.io/audit=restricted
  api_port="$(free_port)"
  metrics_port="$(free_port)"
  api_metrics_port="$(free_port)"
  node test/chart/live.ts prepare "$ns" "$out/live"
  helm install folio "$chart" --namespace "$ns" -f test/chart/values-live.yaml \
    --set api.port="$api_port" --set api.metricsPort="$api_metrics_port" --set controller.metricsPort="$metrics_port" \
    --set storage.s3.endpoint="$CHART_S3_ENDPOINT" --set storage.s3.region="$CHART_S3_REGION" \
    --set tests.url="https://127.0.0.1:$api_port" --timeout 2m >/dev/null
  node test/chart/live.ts kubeconfigs "$ns" folio
  helm get manifest folio -n "$ns" >"$out/installed-live.yaml"
  node test/chart/kube.ts installed "$ns" "$out/installed-live.yaml"
  node test/chart/kube.ts rbac "$ns" folio

  step live-ready "live release: Deployments Available, probes answer, the controller leads"
  node test/chart/live.ts available "$ns" folio

  step helm-test "helm test: the readyz hook pod runs in the cluster"
  helm test folio --namespace "$ns" --timeout 2m >"$out/helm-test.log" || { cat "$out/helm-test.log"; die "helm test failed"; }
  sed 's/^/  /' "$out/helm-test.log"
  grep -Eq 'Phase:[[:space:]]+Succeeded' "$out/helm-test.log" || die "helm test does not report the hook pod Succeeded"
  echo "  ok    helm test: the hook pod ran on the local kubelet and Succeeded"

  step live-job "live release: one merge through the API, the controller, a runner pod, S3, a webhook"
  node test/chart/live.ts job "$ns" folio "https://127.0.0.1:$api_port" "$out/live"

  step live-remove "live release: helm uninstall"
  helm get manifest folio -n "$ns" >"$out/installed-live.yaml"
  helm uninstall folio --namespace "$ns" --wait --timeout 2m >/dev/null
  node test/chart/kube.ts uninstalled "$ns" "$out/installed-live.yaml"

  step k8s-stop "stop the control plane and MinIO"
  kill -TERM "$platform_pid"; wait "$platform_pid" || true; platform_pid=""
fi

step done "done"
printf '\nchart-test passed in %d s:\n' $((SECONDS - started))
printf '  %s\n' "${timings[@]}"
