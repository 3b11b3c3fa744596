/**
 * Sealing small secrets at rest (protect passwords of queued jobs) with AES-256-GCM under a key
 * kept apart from the records. The sealed form is version ‖ IV ‖ tag ‖ ciphertext.
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

const VERSION = 1;

export function seal(key: Buffer, plaintext: string): Buffer {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return Buffer.concat([Buffer.from([VERSION]), iv, cipher.getAuthTag(), body]);
}

export function unseal(key: Buffer, sealed: Buffer): string {
  if (sealed[0] !== VERSION) throw new Error("unknown sealed format");
  const decipher = createDecipheriv("aes-256-gcm", key, sealed.subarray(1, 13));
  decipher.setAuthTag(sealed.subarray(13, 29));
  return Buffer.concat([decipher.update(sealed.subarray(29)), decipher.final()]).toString("utf8");
}
