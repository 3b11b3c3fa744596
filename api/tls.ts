/**
 * TLS material for `folio serve`: the operator's own certificate and key, or a self-signed one
 * generated on first start into the data directory (with openssl, which every Debian has) and
 * reused after.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, readFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

export interface TlsMaterial {
  cert: Buffer;
  key: Buffer;
  certPath: string;
  generated: boolean;
}

export async function loadOrCreateTls(dataDir: string, given: { cert?: string; key?: string }): Promise<TlsMaterial> {
  if (given.cert || given.key) {
    if (!given.cert || !given.key) throw new Error("FOLIO_TLS_CERT and FOLIO_TLS_KEY go together");
    return { cert: await readFile(given.cert), key: await readFile(given.key), certPath: given.cert, generated: false };
  }
  const certPath = path.join(dataDir, "tls-cert.pem");
  const keyPath = path.join(dataDir, "tls-key.pem");
  let generated = false;
  if (!existsSync(certPath) || !existsSync(keyPath)) {
    await run("openssl", [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-days",
      "825",
      "-subj",
      "/CN=localhost",
      "-addext",
      "subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1",
      "-keyout",
      keyPath,
      "-out",
      certPath,
    ]);
    await chmod(keyPath, 0o600);
    generated = true;
  }
  return { cert: await readFile(certPath), key: await readFile(keyPath), certPath, generated };
}
