/**
 * Configuration: every key Folio reads, its default and its meaning, in one place. It is parsed
 * once at start-up into a frozen object; nothing else in the code base reads `process.env`.
 * An invalid value stops the process with a message that names the variable.
 */
import os from "node:os";
import { z } from "zod";
import { proxyEntryProblem } from "./net/proxies.ts";

const int = (def: number) => z.coerce.number().int().positive().default(def);
const bool = (def: boolean) =>
  z
    .enum(["true", "false", "1", "0", "yes", "no"])
    .default(def ? "true" : "false")
    .transform((v) => v === "true" || v === "1" || v === "yes");

/** A JSON value checked by `schema`; unset, empty or `null` (Helm's toJson of nothing) is absent. */
const json = <T extends z.ZodType>(schema: T) =>
  z
    .string()
    .optional()
    .transform((text, ctx): z.output<T> | undefined => {
      if (text === undefined || text.trim() === "null") return undefined;
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        ctx.addIssue({ code: "custom", message: "must be JSON" });
        return z.NEVER;
      }
      const parsed = schema.safeParse(value);
      if (!parsed.success) {
        ctx.addIssue({
          code: "custom",
          message: parsed.error.issues.map((i) => `${i.path.join(".") || "(value)"}: ${i.message}`).join("; "),
        });
        return z.NEVER;
      }
      return parsed.data;
    });
const Quantities = z.record(z.string(), z.union([z.string(), z.number()]).transform(String));

/** Each entry: the environment variable, its schema and a sentence for the README. */
export const CONFIG_KEYS = {
  FOLIO_LOG_LEVEL: {
    schema: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
    doc: "Log level (pino); `folio run` logs warnings only unless set.",
  },
  FOLIO_TMP_DIR: {
    schema: z.string().default(os.tmpdir()),
    doc: "Scratch space for the engines (one private 0700 directory per job, removed after it).",
    defaultDoc: "the OS temp dir",
  },
  FOLIO_QPDF: { schema: z.string().default("qpdf"), doc: "qpdf executable." },
  FOLIO_SOFFICE: { schema: z.string().default("soffice"), doc: "LibreOffice executable." },
  FOLIO_SOFFICE_POOL_SIZE: {
    schema: z.coerce.number().int().min(0).default(0),
    doc: "Warm LibreOffice instances per runner worker; `0` converts with a cold one-shot soffice (the worker uses at least 1).",
  },
  FOLIO_SOFFICE_JOB_TIMEOUT_MS: {
    schema: int(120_000),
    doc: "Hard limit for one conversion; the instance is killed and restarted.",
  },
  FOLIO_SOFFICE_MAX_JOBS: { schema: int(200), doc: "A warm instance is recycled after this many conversions." },
  FOLIO_SOFFICE_MAX_RSS_MB: { schema: int(1024), doc: "A warm instance is recycled when its resident memory exceeds this." },
  FOLIO_MAX_PAGES: { schema: int(2000), doc: "Pages per input document (`limit_exceeded` beyond)." },
  FOLIO_MAX_FILE_BYTES: { schema: int(100 * 1024 * 1024), doc: "Bytes per input file." },
  FOLIO_MAX_MERGE_FILES: { schema: int(50), doc: "Files per merge." },
  FOLIO_MAX_IMAGE_PIXELS: {
    schema: int(100_000_000),
    doc: "Largest image compress decodes; larger ones are kept as they are.",
  },
  FOLIO_MAX_OUTPUT_PAGES: {
    schema: int(10_000),
    doc: "Pages in all the outputs of one job together (limit_exceeded beyond); a job may always write each page of its inputs once, so the cap bites on repeated page ranges (`1-,1-,…`) and Office documents that explode into pages.",
  },
  FOLIO_MAX_OUTPUT_BYTES: {
    schema: int(2 * 1024 ** 3),
    doc: "Bytes of all the outputs of one job together, a split's zip included (limit_exceeded beyond); never less than twice the job's input bytes.",
  },
  FOLIO_MAX_DECOMPRESSED_BYTES: {
    schema: int(1024 ** 3),
    doc: "Bytes the compressed streams of one PDF, or the parts of one Office document, may inflate to (limit_exceeded beyond), checked before an engine decompresses them.",
  },
  FOLIO_MAX_DECOMPRESSION_RATIO: {
    schema: int(200),
    doc: "Above 64 MiB, inflated bytes may be at most this many times the file's size (limit_exceeded beyond): compression bombs inflate a thousandfold, real documents rarely twentyfold.",
  },
  FOLIO_JOB_TIMEOUT_MS: { schema: int(300_000), doc: "Hard limit for one job in the runner (`timeout`)." },
  FOLIO_PRETTY_LOGS: { schema: bool(false), doc: "Human-readable logs instead of JSON lines." },
  // --- HTML → PDF (Chromium) and OCR, issue #15
  FOLIO_CHROMIUM: { schema: z.string().default("chromium"), doc: "Chromium executable (HTML, Markdown and URL → PDF)." },
  FOLIO_CHROMIUM_POOL_SIZE: {
    schema: z.coerce.number().int().min(0).default(1),
    doc: "Warm browsers per runner worker; 0 renders with a browser started for the job.",
  },
  FOLIO_CHROMIUM_MAX_JOBS: { schema: int(100), doc: "A warm browser is replaced after this many renderings." },
  FOLIO_CHROMIUM_RECYCLE_MB: {
    schema: int(600),
    doc: "A warm browser is replaced when its processes' memory (PSS) exceeds this after a job.",
  },
  FOLIO_CHROMIUM_JOB_MAX_MB: { schema: int(1536), doc: "Memory a browser may reach during one rendering (limit_exceeded beyond)." },
  FOLIO_CHROMIUM_JOB_TIMEOUT_MS: { schema: int(60_000), doc: "Hard limit for one rendering, waits included (timeout beyond)." },
  FOLIO_CHROMIUM_HEAP_MB: { schema: int(512), doc: "JavaScript heap limit of a page's renderer." },
  FOLIO_FETCH_ALLOWED_HOSTS: {
    schema: z
      .string()
      .default("")
      .transform((s) =>
        s
          .split(",")
          .map((h) => h.trim())
          .filter(Boolean),
      ),
    doc: "Comma-separated hosts or addresses an HTML page or `url` may fetch from although they are not public (the fetch proxy's allow-list).",
  },
  FOLIO_OCR_JOBS: {
    schema: z.coerce.number().int().min(0).default(0),
    doc: "Pages OCRed at once in one job (Tesseract processes); 0 = as many as the runner's CPUs.",
  },
  FOLIO_JAVA: { schema: z.string().default("java"), doc: "Java 17+ executable for veraPDF (PDF/A validation)." },
  FOLIO_VERAPDF_JAR: {
    schema: z.string().default(".tools/verapdf/greenfield-apps.jar"),
    doc: "veraPDF's command-line jar (org.verapdf.apps:greenfield-apps from Maven Central), which validates every PDF/A output; a relative path is taken from Folio's directory.",
  },
  FOLIO_SANDBOX: {
    schema: z.enum(["bwrap", "container", "none"]).default("bwrap"),
    doc:
      "How engine processes (qpdf, LibreOffice) are isolated (core/sandbox.ts): `bwrap` — each in a bubblewrap sandbox that sees only its job's files, " +
      "without network, in its own PID namespace, with a memory cap (Folio refuses to start without bubblewrap); `container` — the process runs in a " +
      "container that is the sandbox (the runner image sets it); `none` — no sandbox, an explicit opt-out that is logged as an error at every start.",
  },
  FOLIO_SANDBOX_MEMORY_MB: {
    schema: int(4096),
    doc: "Memory cap of each sandboxed engine process: its address space (RLIMIT_AS) in MiB; LibreOffice alone maps about 1.2 GiB.",
  },

  // --- the API (folio serve) ---
  FOLIO_PORT: {
    schema: z.coerce.number().int().min(0).max(65535).default(8443),
    doc: "HTTPS port of `folio serve` (`--port`). Plain HTTP on it is answered `403 https_required`.",
  },
  FOLIO_HOST: { schema: z.string().default("127.0.0.1"), doc: "Address `folio serve` listens on (`0.0.0.0` for every interface)." },
  FOLIO_DATA_DIR: {
    schema: z.string().default(".data"),
    doc: "Embedded mode: SQLite database, stored files, sealing key, generated TLS certificate (`--data-dir`).",
  },
  FOLIO_TLS_CERT: {
    schema: z.string().optional(),
    doc: "PEM certificate to serve instead of the generated self-signed one.",
  },
  FOLIO_TLS_KEY: { schema: z.string().optional(), doc: "PEM private key for `FOLIO_TLS_CERT`." },
  FOLIO_TRUST_PROXY: {
    schema: z
      .string()
      .default("")
      .superRefine((s, ctx) => {
        for (const entry of s
          .split(",")
          .map((e) => e.trim())
          .filter(Boolean)) {
          const problem = proxyEntryProblem(entry);
          if (problem) ctx.addIssue({ code: "custom", message: problem });
        }
      }),
    doc: "Comma-separated proxy addresses and CIDR ranges (`10.0.0.0/8`, `fd00::/8`) whose `X-Forwarded-Proto`/`X-Forwarded-For` are trusted; the client is the rightmost `X-Forwarded-For` hop that is not one of them.",
  },
  FOLIO_MAX_CONNECTIONS: { schema: int(4096), doc: "Open connections on the API's port in all; more are closed at once." },
  FOLIO_MAX_CONNECTIONS_PER_ADDRESS: {
    schema: int(128),
    doc: "Open connections per client address (IPv6 by /64); trusted proxies are exempt.",
  },
  FOLIO_FIRST_BYTE_TIMEOUT_MS: { schema: int(10_000), doc: "A connection that sends nothing for this long is closed." },
  FOLIO_HEADERS_TIMEOUT_MS: {
    schema: int(30_000),
    doc: "TLS handshake, then a request's headers, must each complete within this.",
  },
  FOLIO_KEEP_ALIVE_TIMEOUT_MS: { schema: int(5_000), doc: "An idle keep-alive connection is closed after this long." },
  FOLIO_AUTH_FAILURES_PER_MINUTE: {
    schema: int(10),
    doc: "Failed authentications per client address and per key id per minute (`429 rate_limited` beyond).",
  },
  FOLIO_AUTH_FAILURE_BURST: { schema: int(20), doc: "Failed authentications allowed in a burst." },
  FOLIO_WORKERS: {
    schema: z.coerce.number().int().min(1).max(64).default(2),
    doc: "Runner worker processes (jobs run at once) in embedded mode.",
  },
  FOLIO_RATE_LIMIT_PER_MINUTE: { schema: int(600), doc: "Business plan: requests per minute per API key (token bucket refill rate)." },
  FOLIO_RATE_LIMIT_BURST: { schema: int(100), doc: "Business plan: token bucket size." },
  FOLIO_MAX_UNFINISHED_JOBS: { schema: int(20), doc: "Business plan: queued or running jobs per tenant (`429 too_many_jobs` beyond)." },
  FOLIO_MAX_STORED_BYTES: {
    schema: int(5 * 1024 ** 3),
    doc: "Business plan: bytes a tenant may keep stored, uploads plus unexpired outputs (`413 storage_quota_exceeded` beyond).",
  },
  FOLIO_MAX_REQUEST_BYTES: { schema: int(500 * 1024 * 1024), doc: "Bytes per request (`413 payload_too_large` beyond)." },
  FOLIO_RETENTION_SECONDS: {
    schema: z.coerce.number().int().min(1).max(86_400).default(3600),
    doc: "Outputs and job records live this long after the job ends (at most 86400).",
  },
  FOLIO_UPLOAD_TTL_SECONDS: { schema: int(3600), doc: "Uploaded files no job uses expire after this long." },
  FOLIO_SWEEP_INTERVAL_MS: { schema: int(15_000), doc: "How often expired jobs and files are deleted." },
  FOLIO_KEY_ROTATION_GRACE_SECONDS: { schema: int(86_400), doc: "How long a rotated API key or webhook secret keeps working." },
  FOLIO_BACKEND: {
    schema: z.enum(["embedded", "kubernetes"]).default("embedded"),
    doc: 'Where `folio serve` runs jobs: `embedded` (SQLite, local disk, runner pool) or `kubernetes` (PdfJobs, S3; see "Kubernetes mode").',
  },
  FOLIO_API_SERVICE: {
    schema: z.string().optional(),
    doc: "API, Kubernetes mode: the API's Service. Each replica takes 1/n of every rate limit (rate and burst), n = the Service's ready endpoints (its EndpointSlices, watched); unset: each replica applies the whole limit. The chart sets it.",
  },
  FOLIO_JOBS_NAMESPACE: {
    schema: z.string().optional(),
    doc: "Kubernetes mode: namespace the API creates PdfJobs and their Secrets in.",
    defaultDoc: "`POD_NAMESPACE`, else `default`",
  },
  FOLIO_WEBHOOK_ALLOWED_HOSTS: {
    schema: z
      .string()
      .default("")
      .transform((s) =>
        s
          .split(",")
          .map((h) => h.trim())
          .filter(Boolean),
      ),
    doc: "Comma-separated hosts or addresses webhooks may reach although they are not public (e.g. `127.0.0.1`).",
  },
  FOLIO_WEBHOOK_CA_FILE: {
    schema: z.string().optional(),
    doc: "Controller: PEM file of CA certificates trusted for webhook receivers besides the system roots (for tests with a self-signed receiver).",
  },
  // --- the controller (folio controller, Kubernetes mode) ---
  FOLIO_RUNNER_IMAGE: { schema: z.string().optional(), doc: "Controller: the runner image its Jobs run (required by `folio controller`)." },
  FOLIO_RUNNER_FULL_IMAGE: {
    schema: z.string().optional(),
    doc: "Controller: the runner image with Chromium, OCRmyPDF/Tesseract and veraPDF, for OCR, PDF/A and web-page conversions (default: FOLIO_RUNNER_IMAGE for every job).",
  },
  FOLIO_RUNNER_IMAGE_PULL_POLICY: {
    schema: z.enum(["Always", "IfNotPresent", "Never"]).optional(),
    doc: "Controller: `Always`, `IfNotPresent` or `Never` for the runner Jobs.",
  },
  FOLIO_RUNNER_SERVICE_ACCOUNT: {
    schema: z.string().optional(),
    doc: "Controller: serviceAccountName of the runner pods (their token is never mounted).",
  },
  FOLIO_RUNNER_RESOURCES: {
    schema: json(z.strictObject({ requests: Quantities.optional(), limits: Quantities.optional() })),
    doc: 'Controller: the runner container\'s resources as JSON (`{"requests":{…},"limits":{…}}`).',
    defaultDoc: "250m/512Mi requested, 2 CPU/2Gi limit",
  },
  FOLIO_RUNNER_TMP_SIZE_LIMIT: {
    schema: z.string().optional(),
    doc: "Controller: sizeLimit of the runner pods' /tmp emptyDir (e.g. `8Gi`).",
  },
  FOLIO_RUNNER_TTL_SECONDS: { schema: int(600), doc: "Controller: ttlSecondsAfterFinished of the runner Jobs." },
  FOLIO_RUNNER_TIMEOUT_MS: {
    schema: z.coerce.number().int().min(1000).optional(),
    doc: "Controller: the runner's own time limit for a job (it then reports `timeout`); the Job's activeDeadlineSeconds stays the hard stop.",
    defaultDoc: "just under the Job's deadline",
  },
  FOLIO_RUNNER_S3_ENDPOINT: {
    schema: z.url({ protocol: /^https?$/ }).optional(),
    doc: "Controller: the object store's endpoint as runner pods reach it, which the presigned URLs it hands them name (when their network reaches the store by another address than the controller's).",
    defaultDoc: "`FOLIO_S3_ENDPOINT`",
  },
  FOLIO_RUNNER_NODE_SELECTOR: {
    schema: json(z.record(z.string(), z.string())),
    doc: "Controller: nodeSelector of the runner pods, as JSON.",
  },
  FOLIO_RUNNER_TOLERATIONS: {
    schema: json(z.array(z.looseObject({}))),
    doc: "Controller: tolerations of the runner pods, as a JSON array.",
  },
  FOLIO_RUNNER_PRIORITY_CLASS: { schema: z.string().optional(), doc: "Controller: priorityClassName of the runner pods." },
  FOLIO_CONTROLLER_WORKERS: { schema: z.coerce.number().int().min(1).max(64).default(2), doc: "Controller: PdfJobs reconciled at once." },
  FOLIO_MAX_RUNNING_JOBS: {
    schema: z.coerce.number().int().min(0).default(50),
    doc: "Controller: runner Jobs at once in total, shared fairly between tenants; the others wait queued, their place in `status.queuePosition` (`kubectl get pj -o wide`). `0`: no limit.",
  },
  FOLIO_CONTROLLER_NAMESPACE: { schema: z.string().optional(), doc: "Controller: watch only this namespace." },
  FOLIO_CONTROLLER_LEADER_ELECTION: { schema: bool(true), doc: "Controller: Lease leader election (one active replica)." },
  FOLIO_METRICS_PORT: {
    schema: z.coerce.number().int().min(0).max(65535).default(9090),
    doc: "Plain-HTTP metrics port: the controller's `/metrics`, `/healthz` and `/readyz` (ready once its informers have synced); the API's `/metrics` in Kubernetes mode, where the public HTTPS port does not serve it (API.md). `0` picks a free port.",
  },
  FOLIO_CONTROLLER_LEASE_NAMESPACE: {
    schema: z.string().optional(),
    doc: "Controller: namespace of the leader Lease (default: the watched one, else `POD_NAMESPACE`).",
  },
  POD_NAME: { schema: z.string().optional(), doc: "Controller: this pod's name (downward API), part of its leader identity." },
  POD_NAMESPACE: { schema: z.string().optional(), doc: "Controller: this pod's namespace (downward API)." },
  KUBECONFIG: {
    schema: z.string().optional(),
    doc: "Controller: kubeconfig to use; in a pod the in-cluster service account is used when unset.",
  },
  FOLIO_ACCESS_REQUESTS_PER_HOUR: { schema: int(10), doc: "Access requests accepted per client address per hour." },

  // --- the dashboard (/dashboard) ---
  FOLIO_PUBLIC_URL: {
    schema: z.url({ protocol: /^https$/ }).optional(),
    doc: "Public base URL of the installation, used in dashboard invite links.",
    defaultDoc: "`https://localhost:FOLIO_PORT`",
  },
  FOLIO_DASHBOARD_SECRET: {
    schema: z.string().min(32).optional(),
    doc: "Key (≥ 32 characters) that signs dashboard sessions; the same on every API replica.",
    defaultDoc: "made in the data directory (embedded)",
  },
  FOLIO_DASHBOARD_IDLE_MINUTES: { schema: int(30), doc: "A dashboard session ends after this many minutes without a request." },
  FOLIO_DASHBOARD_SESSION_HOURS: { schema: int(12), doc: "A dashboard session ends this many hours after sign-in, however active." },
  FOLIO_DASHBOARD_SIGNIN_PER_MINUTE: { schema: int(10), doc: "Dashboard sign-in attempts per client address per minute (and the burst)." },
  FOLIO_OIDC_ISSUER: {
    schema: z.url().optional(),
    doc: "OpenID Connect issuer for dashboard sign-in (optional; https, or http on loopback).",
  },
  FOLIO_OIDC_CLIENT_ID: { schema: z.string().optional(), doc: "OpenID Connect client id." },
  FOLIO_OIDC_CLIENT_SECRET: { schema: z.string().optional(), doc: "OpenID Connect client secret." },
  FOLIO_OIDC_TENANT_CLAIM: { schema: z.string().default("folio_tenant"), doc: "ID token claim holding the person's tenant name." },
  FOLIO_OIDC_ROLE_CLAIM: {
    schema: z.string().default("folio_role"),
    doc: "ID token claim holding the role: `owner`, `developer`, `viewer` or `operator`.",
  },
  FOLIO_SMTP_URL: {
    schema: z.string().optional(),
    doc: "SMTP server for invite e-mails (`smtp[s]://user:pass@host:port`); without it invites only print their link.",
  },
  FOLIO_SMTP_FROM: { schema: z.string().default("Folio <folio@localhost>"), doc: "Sender of invite e-mails." },

  // --- S3-compatible storage (Kubernetes mode: the API, the controller and the runner pods) ---
  // Credentials are not configuration: the AWS SDK's default chain reads AWS_ACCESS_KEY_ID and
  // AWS_SECRET_ACCESS_KEY (or a web identity, a profile, instance metadata) itself.
  FOLIO_S3_BUCKET: { schema: z.string().optional(), doc: "Kubernetes mode: the S3 bucket holding inputs and outputs (required there)." },
  FOLIO_S3_REGION: { schema: z.string().default("us-east-1"), doc: "S3 region (most S3-compatible servers accept any)." },
  FOLIO_S3_ENDPOINT: {
    schema: z.url({ protocol: /^https?$/ }).optional(),
    doc: "Endpoint URL of an S3-compatible server (MinIO, Ceph …); default: AWS for the region.",
  },
  FOLIO_S3_FORCE_PATH_STYLE: {
    schema: bool(false),
    doc: "Path-style addressing (`endpoint/bucket/key`), which most S3-compatible servers need. S3 credentials are read by the AWS SDK's default chain (`AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`, web identity, …), not by Folio's configuration.",
  },
} as const;

type Keys = typeof CONFIG_KEYS;
export type Config = Readonly<{ [K in keyof Keys]: z.output<Keys[K]["schema"]> }>;

export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

/** Parses the environment (or the given record) into a frozen Config; throws ConfigError. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const out: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [key, { schema }] of Object.entries(CONFIG_KEYS)) {
    const raw = env[key];
    const parsed = (schema as z.ZodType).safeParse(raw === "" ? undefined : raw);
    if (parsed.success) out[key] = parsed.data;
    else problems.push(`${key}: ${parsed.error.issues.map((i) => i.message).join("; ")} (got ${JSON.stringify(raw)})`);
  }
  if (problems.length) throw new ConfigError(`invalid configuration:\n  ${problems.join("\n  ")}`);
  return Object.freeze(out) as Config;
}
