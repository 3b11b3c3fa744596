/**
 * The local kubelet honours a pod spec as a kubelet would (issue #11; test/k8s/runtime): pods of
 * the runner image, run with runc, each checked by what the API then shows — the container's
 * terminated state and reason, the pod's phase and conditions:
 *
 * - a container past its memory limit is OOMKilled (exit 137), by the memory cgroup;
 * - an emptyDir past its sizeLimit evicts the pod (reason Evicted, DisruptionTarget);
 * - a command that cannot be executed is a StartError (exit 128);
 * - runAsNonRoot with uid 0 never starts (CreateContainerConfigError, the kubelet's message);
 * - a pod that mounts its service-account token gets a token the API server accepts as that
 *   ServiceAccount, the cluster's CA and its namespace;
 * - the CPU limit becomes the cgroup's CFS quota, the user and groups those of the spec;
 * - env (values, secretKeyRef, $(VAR) references) and envFrom (a ConfigMap, a Secret with a
 *   prefix), a Secret volume (items, defaultMode, read-only), args after command, a custom
 *   terminationMessagePath and a non-zero exit code reach the API as a kubelet reports them.
 */
import { AuthenticationV1Api, CoreV1Api, type KubeConfig, type V1Pod, type V1PodSpec } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runnerImage } from "../k8s/images.ts";
import { loadKubeConfig } from "../k8s/kubeconfig.ts";
import { startPlatform, type Platform } from "../k8s/platform.ts";
import { until } from "./support.ts";

const NS = "default";
let platform: Platform;
let kc: KubeConfig;
let core: CoreV1Api;
let n = 0;

/** A restricted pod of the runner image running `script` in sh. */
function pod(script: string, extra: Partial<V1PodSpec> = {}, container: Record<string, unknown> = {}): V1Pod {
  return {
    metadata: { name: `kubelet-${++n}`, namespace: NS },
    spec: {
      restartPolicy: "Never",
      automountServiceAccountToken: false,
      terminationGracePeriodSeconds: 2,
      securityContext: { runAsNonRoot: true, runAsUser: 10001, runAsGroup: 10001, seccompProfile: { type: "RuntimeDefault" } },
      volumes: [{ name: "tmp", emptyDir: {} }],
      ...extra,
      containers: [
        {
          name: "main",
          image: runnerImage(),
          command: ["sh", "-c", script],
          securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ["ALL"] } },
          volumeMounts: [{ name: "tmp", mountPath: "/tmp" }],
          ...container,
        },
      ],
    },
  };
}

async function run(p: V1Pod, done: (p: V1Pod) => boolean = (x) => ["Succeeded", "Failed"].includes(x.status?.phase ?? "")): Promise<V1Pod> {
  await core.createNamespacedPod({ namespace: NS, body: p });
  return until(
    `pod ${p.metadata!.name!}`,
    async () => {
      const got = await core.readNamespacedPodStatus({ namespace: NS, name: p.metadata!.name! });
      return done(got) ? got : undefined;
    },
    120_000,
  );
}

const terminated = (p: V1Pod) => p.status?.containerStatuses?.[0]?.state?.terminated;

describe("the local kubelet runs pods as a kubelet would", () => {
  beforeAll(async () => {
    platform = await startPlatform();
    kc = loadKubeConfig(platform.kubeconfig);
    core = kc.makeApiClient(CoreV1Api);
    await until("the default ServiceAccount", () =>
      core.readNamespacedServiceAccount({ namespace: NS, name: "default" }).catch(() => undefined),
    );
  });
  afterAll(async () => {
    await platform?.stop();
  });

  it("reports OOMKilled when the memory limit is hit", async () => {
    const p = await run(
      pod("node -e 'const a = []; for (;;) a.push(Buffer.alloc(8 << 20, 1))'", {}, { resources: { limits: { memory: "96Mi", cpu: "1" } } }),
    );
    expect(p.status?.phase).toBe("Failed");
    expect(terminated(p)).toMatchObject({ exitCode: 137, reason: "OOMKilled" });
  });

  it("evicts a pod whose emptyDir passes its sizeLimit", async () => {
    const p = await run(
      pod("head -c 20000000 /dev/zero > /tmp/big; sleep 60", { volumes: [{ name: "tmp", emptyDir: { sizeLimit: "5Mi" } }] }),
    );
    expect(p.status).toMatchObject({ phase: "Failed", reason: "Evicted" });
    expect(p.status?.message).toContain('Usage of EmptyDir volume "tmp" exceeds the limit "5Mi"');
    expect(p.status?.conditions?.find((c) => c.type === "DisruptionTarget")).toMatchObject({
      status: "True",
      reason: "TerminationByKubelet",
    });
  });

  it("reports a command that cannot be executed as StartError", async () => {
    const p = await run(pod("", {}, { command: ["/no/such/engine"] }));
    expect(p.status?.phase).toBe("Failed");
    expect(terminated(p)).toMatchObject({ exitCode: 128, reason: "StartError" });
    expect(terminated(p)?.message).toMatch(/no such file/i);
  });

  it("never starts a runAsNonRoot container as uid 0", async () => {
    const p = await run(pod("true", { securityContext: { runAsNonRoot: true, runAsUser: 0 } }), (x) =>
      Boolean(x.status?.containerStatuses?.[0]?.state?.waiting?.message),
    );
    expect(p.status?.containerStatuses?.[0]?.state?.waiting).toMatchObject({
      reason: "CreateContainerConfigError",
      message: "container has runAsNonRoot and image will run as root",
    });
    await core.deleteNamespacedPod({ namespace: NS, name: p.metadata!.name!, gracePeriodSeconds: 0 });
  });

  it("projects the service-account token, the CA and the namespace; sets the user, groups and CPU quota of the spec", async () => {
    const dir = "/var/run/secrets/kubernetes.io/serviceaccount";
    const p = await run(
      pod(
        `cat ${dir}/token > /dev/termination-log; echo >> /dev/termination-log; cat ${dir}/namespace >> /dev/termination-log; echo >> /dev/termination-log;` +
          ` grep -c CERTIFICATE ${dir}/ca.crt >> /dev/termination-log; id -u >> /dev/termination-log; id -G >> /dev/termination-log;` +
          " cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us >> /dev/termination-log",
        {
          automountServiceAccountToken: true,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: 10001,
            runAsGroup: 10001,
            supplementalGroups: [4242],
            seccompProfile: { type: "RuntimeDefault" },
          },
        },
        { resources: { limits: { cpu: "500m", memory: "256Mi" } } },
      ),
    );
    expect(terminated(p)?.exitCode, terminated(p)?.message).toBe(0);
    const [token = "", namespace, certificates, uid, groups, quota] = (terminated(p)?.message ?? "").trim().split("\n");
    expect(namespace).toBe(NS);
    expect(Number(certificates)).toBeGreaterThan(0);
    expect(uid).toBe("10001");
    expect(groups?.split(" ").sort()).toEqual(["10001", "4242"]);
    expect(quota).toBe("50000");
    const review = await kc.makeApiClient(AuthenticationV1Api).createTokenReview({ body: { spec: { token } } });
    expect(review.status?.authenticated).toBe(true);
    expect(review.status?.user?.username).toBe(`system:serviceaccount:${NS}:default`);
    expect(review.status?.user?.extra?.["authentication.kubernetes.io/pod-name"]).toEqual([p.metadata!.name]);
  });

  it("gives the container env and envFrom from a ConfigMap and a Secret, a read-only Secret volume, and reports its exit code and message", async () => {
    const name = `kubelet-data-${++n}`;
    await core.createNamespacedSecret({ namespace: NS, body: { metadata: { name }, stringData: { password: "s3cret", user: "ada" } } });
    await core.createNamespacedConfigMap({ namespace: NS, body: { metadata: { name }, data: { MODE: "fast" } } });
    const report = "/dev/folio-report";
    const script =
      `{ echo "$GREETING"; echo "$PASS"; echo "$MODE"; echo "$S_user"; echo "$COMBINED"; stat -c %a /etc/creds/pw; cat /etc/creds/pw; echo;` +
      ` if touch /etc/creds/x 2>/dev/null; then echo writable; else echo read-only; fi; ls /etc/creds; } > ${report}; exit 3`;
    const p = await run(
      pod(
        "",
        {
          volumes: [
            { name: "tmp", emptyDir: {} },
            { name: "creds", secret: { secretName: name, items: [{ key: "password", path: "pw" }], defaultMode: 0o444 } },
          ],
        },
        {
          command: ["sh", "-c"],
          args: [script],
          envFrom: [{ configMapRef: { name } }, { secretRef: { name }, prefix: "S_" }],
          env: [
            { name: "GREETING", value: "hello" },
            { name: "PASS", valueFrom: { secretKeyRef: { name, key: "password" } } },
            { name: "COMBINED", value: "$(GREETING)-$(MODE)" },
          ],
          volumeMounts: [
            { name: "tmp", mountPath: "/tmp" },
            { name: "creds", mountPath: "/etc/creds" },
          ],
          terminationMessagePath: report,
        },
      ),
    );
    expect(p.status?.phase).toBe("Failed");
    expect(terminated(p)).toMatchObject({ exitCode: 3, reason: "Error" });
    expect((terminated(p)?.message ?? "").trim().split("\n")).toEqual([
      "hello",
      "s3cret",
      "fast",
      "ada",
      "hello-fast",
      "444",
      "s3cret",
      "read-only",
      "pw",
    ]);
  });
});
