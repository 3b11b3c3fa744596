/**
 * The local kubelet's pure translations of a pod spec into a container: ENTRYPOINT/CMD with
 * command/args, $(VAR) expansion, the securityContext (user, runAsNonRoot, capabilities,
 * no_new_privs, seccomp), resources as cgroup settings, the OCI config, the default seccomp
 * profile for a container's capabilities, image references, status patches, termination
 * messages. No cluster needed; the platform itself is exercised by the e2e suites and
 * `node test/k8s/smoke.ts`.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { V1Container, V1Pod } from "@kubernetes/client-node";
import { afterAll, describe, expect, it } from "vitest";
import { normalizeRef } from "../runtime/image-store.ts";
import { containerConfig } from "../runtime/oci-spec.ts";
import { cgroupResources, parseQuantity } from "../runtime/resources.ts";
import { defaultProfile, toOciSeccomp } from "../runtime/seccomp.ts";
import { DEFAULT_CAPABILITIES, effectiveSecurity } from "../runtime/security.ts";
import { expandReferences } from "./env.ts";
import { containerEnv, resolveArgv } from "./images.ts";
import { statusPatch } from "./pod-status.ts";
import { readTerminationMessage } from "./termination.ts";

const image = { entrypoint: ["folio"], cmd: ["runner", "--pod"] };

describe("argv from ENTRYPOINT/CMD and command/args (the API's documented table)", () => {
  it.each([
    ["neither: ENTRYPOINT + CMD", {}, ["folio", "runner", "--pod"]],
    ["args only: ENTRYPOINT + args", { args: ["runner", "--spec", "-"] }, ["folio", "runner", "--spec", "-"]],
    ["command only: CMD is ignored", { command: ["sh", "-c", "true"] }, ["sh", "-c", "true"]],
    ["command and args", { command: ["sh", "-c"], args: ["exit 3"] }, ["sh", "-c", "exit 3"]],
    ["$(VAR) expands from the env", { args: ["--spec", "$(SPEC)"] }, ["folio", "--spec", "/spec/job.json"]],
  ])("%s", (_why, container, want) => {
    expect(resolveArgv(container, image, { SPEC: "/spec/job.json" })).toEqual(want);
  });

  it("refuses an image without ENTRYPOINT or CMD when the container names no command", () => {
    expect(() => resolveArgv({ image: "x" }, { entrypoint: [], cmd: [] }, {})).toThrow(/no command/);
  });

  it("layers the environment: image ENV, then the kubelet's, then the pod's", () => {
    expect(containerEnv({ env: ["PATH=/img", "HOME=/tmp", "A=image"] }, { HOSTNAME: "p" }, { A: "pod" })).toEqual({
      PATH: "/img",
      HOME: "/tmp",
      HOSTNAME: "p",
      A: "pod",
    });
  });
});

describe("$(VAR) expansion (third_party/forked/golang/expansion)", () => {
  it.each([
    ["a defined name", "a=$(A)", "a=1"],
    ["an undefined name stays as written", "$(NOPE)", "$(NOPE)"],
    ["$$ escapes a dollar", "$$(A)", "$(A)"],
    ["shell syntax is not a reference", "$(cat /x) $HOME", "$(cat /x) $HOME"],
  ])("%s: %s", (_why, input, want) => {
    expect(expandReferences(input, { A: "1" })).toBe(want);
  });
});

describe("image references (containerd's normalisation)", () => {
  it.each([
    ["a bare name gets library/ and :latest", "debian", "docker.io/library/debian:latest"],
    ["a repository gets docker.io", "folio/runner:0.1.0", "docker.io/folio/runner:0.1.0"],
    ["a registry is kept", "folio.test/folio/api:0.1.0", "folio.test/folio/api:0.1.0"],
    ["a registry with a port is kept", "localhost:5000/x", "localhost:5000/x:latest"],
    ["a digest keeps no tag", "folio/runner:1@sha256:abc", "docker.io/folio/runner@sha256:abc"],
  ])("%s: %s", (_why, ref, want) => {
    expect(normalizeRef(ref)).toBe(want);
  });
});

describe("securityContext (container over pod; containerd's defaults)", () => {
  const passwd = "root:x:0:0::/root:/bin/sh\nfolio:x:10001:10001::/tmp:/usr/sbin/nologin\n";
  const files = { passwd, group: "root:x:0:\nfolio:x:10001:\n" };
  const restricted: V1Container = {
    name: "c",
    securityContext: {
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ["ALL"] },
      seccompProfile: { type: "RuntimeDefault" },
    },
  };

  it("runs the restricted runner as 10001 with no capabilities, no_new_privs, read-only root and seccomp", () => {
    expect(effectiveSecurity({ runAsUser: 10001, fsGroup: 10001 }, restricted, "10001:10001", files)).toEqual({
      uid: 10001,
      gid: 10001,
      additionalGids: [],
      capabilities: [],
      noNewPrivileges: true,
      readonlyRootfs: true,
      seccomp: "runtime-default",
      fsGroup: 10001,
    });
  });

  it.each([
    ["the image's numeric USER", {}, "10001:10001", { uid: 10001, gid: 10001 }],
    ["a USER name, looked up in the image's passwd", {}, "folio", { uid: 10001, gid: 10001 }],
    ["runAsUser wins, with that uid's primary group", { runAsUser: 10001 }, "", { uid: 10001, gid: 10001 }],
    ["runAsGroup wins over the primary group", { runAsUser: 10001, runAsGroup: 5 }, "", { uid: 10001, gid: 5 }],
    ["an unknown uid gets group 0", { runAsUser: 4242 }, "", { uid: 4242, gid: 0 }],
  ])("user: %s", (_why, pod, user, want) => {
    expect(effectiveSecurity(pod, { name: "c" }, user, files)).toMatchObject(want);
  });

  it.each([
    ["uid 0 under runAsNonRoot", { runAsNonRoot: true }, "", /will run as root/],
    ["a name it cannot verify under runAsNonRoot", { runAsNonRoot: true }, "nobody-here", /non-numeric user/],
    ["a privileged container", {}, "10001", /privileged/],
  ])("refuses %s", (why, pod, user, want) => {
    const container: V1Container = why.includes("privileged") ? { name: "c", securityContext: { privileged: true } } : { name: "c" };
    expect(() => effectiveSecurity(pod, container, user, files)).toThrow(want);
  });

  it("keeps the runtime's default capabilities unless dropped, and adds", () => {
    const c = effectiveSecurity(
      {},
      { name: "c", securityContext: { capabilities: { drop: ["NET_RAW"], add: ["SYS_PTRACE"] } } },
      "0",
      files,
    );
    expect(c.capabilities).toContain("CAP_SYS_PTRACE");
    expect(c.capabilities).not.toContain("CAP_NET_RAW");
    expect(c.capabilities).toHaveLength(DEFAULT_CAPABILITIES.length);
    expect(c.noNewPrivileges).toBe(false); // allowPrivilegeEscalation defaults to true
    expect(c.seccomp).toBe("unconfined"); // no profile: the kubelet's default without SeccompDefault
  });
});

describe("resources as cgroup settings (pkg/kubelet/cm)", () => {
  it.each([
    ["2Gi", 2 * 2 ** 30],
    ["512Mi", 512 * 2 ** 20],
    ["250m", 0.25],
    ["1.5", 1.5],
    ["1e3", 1000],
    ["100M", 1e8],
  ])("quantity %s", (q, want) => {
    expect(parseQuantity(q)).toBeCloseTo(want, 9);
  });

  it("turns the runner's default resources into a memory limit, a CFS quota, shares and a Burstable oom_score_adj", () => {
    const c: V1Container = { name: "r", resources: { requests: { cpu: "250m", memory: "512Mi" }, limits: { cpu: "2", memory: "2Gi" } } };
    expect(cgroupResources(c, 16 * 2 ** 30)).toEqual({ memoryBytes: 2 * 2 ** 30, cpuQuotaUs: 200_000, cpuShares: 256, oomScoreAdj: 969 });
  });

  it("gives Guaranteed pods -997 and BestEffort pods 1000", () => {
    const guaranteed: V1Container = { name: "g", resources: { limits: { cpu: "1", memory: "1Gi" } } };
    expect(cgroupResources(guaranteed, 2 ** 34).oomScoreAdj).toBe(-997);
    expect(cgroupResources({ name: "b" }, 2 ** 34).oomScoreAdj).toBe(1000);
  });
});

describe("the OCI config (containerd's defaults)", () => {
  const config = containerConfig({
    rootfs: "rootfs",
    readonlyRootfs: true,
    argv: ["folio", "runner", "--pod"],
    env: ["A=1"],
    cwd: "/tmp",
    user: { uid: 10001, gid: 10001, additionalGids: [] },
    hostname: "p",
    capabilities: [],
    noNewPrivileges: true,
    mounts: [{ destination: "/tmp", source: "/pods/u/volumes/tmp", readOnly: false }],
    network: { kind: "join", path: "/proc/1/ns/net" },
    cgroupsPath: "/folio/u",
    resources: { memoryBytes: 1024 },
    nofile: 20000,
  }) as {
    process: { capabilities: Record<string, string[]>; noNewPrivileges: boolean; rlimits: unknown[] };
    root: { readonly: boolean };
    mounts: { destination: string; options?: string[] }[];
    linux: { namespaces: { type: string; path?: string }[]; maskedPaths: string[]; resources: { memory?: { limit: number } } };
  };

  it("has a read-only root, no capabilities at all, no_new_privs and the host's nofile limit", () => {
    expect(config.root.readonly).toBe(true);
    expect(Object.values(config.process.capabilities).every((set) => set.length === 0)).toBe(true);
    expect(config.process.noNewPrivileges).toBe(true);
    expect(config.process.rlimits).toEqual([{ type: "RLIMIT_NOFILE", hard: 20000, soft: 20000 }]);
  });

  it("joins the given network namespace and has its own pid, ipc, uts and mount namespaces", () => {
    expect(config.linux.namespaces.map((n) => n.type).sort()).toEqual(["ipc", "mount", "network", "pid", "uts"]);
    expect(config.linux.namespaces.find((n) => n.type === "network")?.path).toBe("/proc/1/ns/net");
  });

  it("mounts /sys/fs/cgroup read-only, masks /proc/kcore, binds volumes and limits memory", () => {
    expect(config.mounts.find((m) => m.destination === "/sys/fs/cgroup")?.options).toContain("ro");
    expect(config.linux.maskedPaths).toContain("/proc/kcore");
    expect(config.mounts.find((m) => m.destination === "/tmp")?.options).toContain("rw");
    expect(config.linux.resources.memory?.limit).toBe(1024);
  });
});

describe("seccomp RuntimeDefault (containers/common's profile for the container's capabilities)", () => {
  const profile = defaultProfile();
  const named = (caps: string[]): Map<string, string> => {
    const out = new Map<string, string>();
    for (const rule of toOciSeccomp(profile, caps, "x64", "6.1.0").syscalls)
      if (!rule.args) for (const n of rule.names) out.set(n, rule.action);
    return out;
  };

  it("refuses bpf, perf_event_open, kexec_load, init_module and userfaultfd to a container without capabilities, allows read", () => {
    const none = named([]);
    expect(none.get("read")).toBe("SCMP_ACT_ALLOW");
    for (const call of ["bpf", "perf_event_open", "kexec_load", "init_module", "userfaultfd"])
      expect(none.get(call), call).toBe("SCMP_ACT_ERRNO");
  });

  it("allows bpf with CAP_SYS_ADMIN, and only then", () => {
    expect(named(["CAP_SYS_ADMIN"]).get("bpf")).toBe("SCMP_ACT_ALLOW");
  });

  it("names x86-64 and its sub-architectures, refusing by default", () => {
    const s = toOciSeccomp(profile, [], "x64", "6.1.0");
    expect(s.architectures[0]).toBe("SCMP_ARCH_X86_64");
    expect(s.defaultAction).toBe("SCMP_ACT_ERRNO");
  });
});

describe("pod status patches (kubelet generateAPIPodStatus)", () => {
  const pod: V1Pod = {
    metadata: { name: "p", namespace: "n", uid: "u1", generation: 1 },
    spec: { containers: [{ name: "main", image: "folio/runner:1" }] },
    status: { conditions: [{ type: "Initialized", status: "True", lastTransitionTime: "2020-01-01T00:00:00Z" as unknown as Date }] },
  };
  const now = new Date("2030-01-01T00:00:00.500Z");
  type Patch = {
    metadata: { uid: string };
    status: {
      phase: string;
      conditions: { type: string; status: string; reason?: string; lastTransitionTime: string }[];
      containerStatuses: { ready: boolean; state: unknown }[];
    };
  };
  const patch = (phase: "Running" | "Succeeded", state: object): Patch =>
    statusPatch(pod, { phase, state: state as never, startTime: now }, now) as unknown as Patch;

  it("carries the UID as a precondition", () => {
    expect(patch("Running", { running: { startedAt: "x" } }).metadata.uid).toBe("u1");
  });

  it("is Ready while running and PodCompleted once terminal", () => {
    const running = patch("Running", { running: { startedAt: "x" } }).status;
    expect(running.conditions.find((c) => c.type === "Ready")?.status).toBe("True");
    expect(running.containerStatuses[0]?.ready).toBe(true);
    const done = patch("Succeeded", { terminated: { exitCode: 0, reason: "Completed", finishedAt: "x" } }).status;
    expect(done.conditions.find((c) => c.type === "Ready")).toMatchObject({ status: "False", reason: "PodCompleted" });
  });

  it("keeps lastTransitionTime while a condition's status is unchanged, in second precision", () => {
    const conditions = patch("Running", { running: { startedAt: "x" } }).status.conditions;
    expect(conditions.find((c) => c.type === "Initialized")?.lastTransitionTime).toBe("2020-01-01T00:00:00Z");
    expect(conditions.find((c) => c.type === "Ready")?.lastTransitionTime).toBe("2030-01-01T00:00:00Z");
  });
});

describe("termination message (kubelet limits)", () => {
  const dir = mkdtempSync(join(tmpdir(), "folio-kubelet-test-"));
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  const msg = join(dir, "msg");
  const log = join(dir, "log");
  writeFileSync(log, Array.from({ length: 100 }, (_, i) => `line ${i}`).join("\n") + "\n");

  it("reads the file, at most 4096 bytes", () => {
    writeFileSync(msg, "x".repeat(5000));
    expect(readTerminationMessage(msg, log, "File", 1)).toHaveLength(4096);
  });

  it("falls back to the last 80 log lines only on failure with an empty file", () => {
    writeFileSync(msg, "");
    expect(readTerminationMessage(msg, log, "FallbackToLogsOnError", 0)).toBe("");
    const tail = readTerminationMessage(msg, log, "FallbackToLogsOnError", 3);
    expect(tail.startsWith("line 20\n")).toBe(true);
    expect(tail.endsWith("line 99\n")).toBe(true);
  });
});
