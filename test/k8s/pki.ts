/**
 * The control plane's credentials, made fresh for every start in its temporary directory:
 * a throwaway CA and the API server's serving certificate (openssl), the service-account signing
 * key pair, and a static token file with one identity per component. Nothing here is secret
 * beyond the life of one test run; every file is created mode 0600 in a 0700 directory.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

/** The identities in the token file, named as the Kubernetes bootstrap RBAC policy expects. */
export interface Identity {
  readonly token: string;
  readonly user: string;
  readonly groups: readonly string[];
}

/** Every credential file the processes read, and the tokens clients use. */
export interface Pki {
  readonly caCert: string;
  readonly caKey: string;
  readonly servingCert: string;
  readonly servingKey: string;
  readonly saSigningKey: string;
  readonly saPublicKey: string;
  readonly tokenFile: string;
  /** Full access (system:masters): the tests and the CLI. */
  readonly admin: Identity;
  /** system:kube-controller-manager: bound to its role by the bootstrap RBAC policy. */
  readonly controllerManager: Identity;
  /** system:kube-scheduler: the local kubelet binds pods with this identity, as a scheduler would. */
  readonly scheduler: Identity;
  /** system:node:<node>, group system:nodes: what a real kubelet authenticates as (Node authorizer). */
  readonly node: Identity;
}

const openssl = (args: readonly string[]): void => {
  execFileSync("openssl", args, { stdio: ["ignore", "ignore", "pipe"] });
};

const identity = (user: string, groups: readonly string[]): Identity => ({
  token: randomBytes(24).toString("hex"),
  user,
  groups,
});

/**
 * Creates the CA, the serving certificate and the keys in `dir`. ECDSA P-256 throughout: key
 * generation is instant, and kube-apiserver accepts ES256 service-account signing keys.
 * `serviceIp` is the first address of --service-cluster-ip-range: in-cluster clients reach the
 * API server as https://kubernetes.default.svc, so real serving certificates carry both.
 */
export function createPki(dir: string, nodeName: string, serviceIp: string): Pki {
  const p = (name: string): string => join(dir, name);
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];

  openssl([
    "req",
    "-x509",
    ...ec,
    "-keyout",
    p("ca.key"),
    "-out",
    p("ca.crt"),
    "-days",
    "7",
    "-subj",
    "/CN=folio-local-ca",
    "-addext",
    "basicConstraints=critical,CA:TRUE",
    "-addext",
    "keyUsage=critical,keyCertSign,cRLSign",
  ]);

  const sans = [
    "IP:127.0.0.1",
    `IP:${serviceIp}`,
    "DNS:localhost",
    "DNS:kubernetes",
    "DNS:kubernetes.default",
    "DNS:kubernetes.default.svc",
    "DNS:kubernetes.default.svc.cluster.local",
  ];
  writeFileSync(
    p("serving.ext"),
    [
      "basicConstraints=critical,CA:FALSE",
      "keyUsage=critical,digitalSignature,keyEncipherment",
      "extendedKeyUsage=serverAuth",
      `subjectAltName=${sans.join(",")}`,
      "",
    ].join("\n"),
    { mode: 0o600 },
  );
  openssl(["req", "-new", ...ec, "-keyout", p("serving.key"), "-out", p("serving.csr"), "-subj", "/CN=kube-apiserver"]);
  openssl([
    "x509",
    "-req",
    "-in",
    p("serving.csr"),
    "-CA",
    p("ca.crt"),
    "-CAkey",
    p("ca.key"),
    "-CAcreateserial",
    "-days",
    "7",
    "-extfile",
    p("serving.ext"),
    "-out",
    p("serving.crt"),
  ]);

  openssl(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", p("sa.key")]);
  openssl(["pkey", "-in", p("sa.key"), "-pubout", "-out", p("sa.pub")]);

  const pki = {
    caCert: p("ca.crt"),
    caKey: p("ca.key"),
    servingCert: p("serving.crt"),
    servingKey: p("serving.key"),
    saSigningKey: p("sa.key"),
    saPublicKey: p("sa.pub"),
    tokenFile: p("tokens.csv"),
    admin: identity("folio-admin", ["system:masters"]),
    controllerManager: identity("system:kube-controller-manager", []),
    scheduler: identity("system:kube-scheduler", []),
    node: identity(`system:node:${nodeName}`, ["system:nodes"]),
  };
  // The static token file format of kube-apiserver --token-auth-file: token,user,uid,"group1,group2".
  const line = (id: Identity): string => `${id.token},${id.user},${id.user},"${id.groups.join(",")}"`;
  writeFileSync(pki.tokenFile, [pki.admin, pki.controllerManager, pki.scheduler, pki.node].map(line).join("\n") + "\n", { mode: 0o600 });
  return pki;
}
