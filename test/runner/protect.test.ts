/**
 * protect on the real engines, checked with qpdf --show-encryption / --requires-password and by
 * opening the output with poppler (pdfinfo, pdftotext) with and without each password. A qpdf
 * wrapper records the argv of every qpdf the runner starts and snapshots every process's command
 * line while qpdf runs, to prove that no password is ever on a command line.
 */
import { randomBytes } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../core/config.ts";
import { encryptedPdf, openWithPdfjs, ownerOnlyEncryptedPdf, recordingQpdf, showEncryption, textPdf } from "../fixtures/pdf-fixtures.ts";
import { errorCode, ok, runOp } from "../helpers/runner.ts";
import { pdfinfo, pdftotext, run, tmpDir } from "../helpers/tools.ts";

let dir: string;
let cleanup: () => Promise<void>;
let doc: string;
let outN = 0;
const out = (): string => path.join(dir, `out-${++outN}`);

beforeAll(async () => {
  ({ dir, cleanup } = await tmpDir("folio-protect-"));
  doc = await textPdf(path.join(dir, "contract.pdf"), 3, "contract");
});
afterAll(() => cleanup());

/** 127 characters, every printable ASCII one that a shell or an argv parser could trip on. */
const LONG = `-${`"'\\ $\`!*?;&|<>(){}[]#~%^=+,.:@/-_ AZaz09`.repeat(4)}`.slice(0, 127);

const PASSWORDS: [string, string][] = [
  ["a leading double dash", "--help"],
  ["a leading dash", "-x"],
  ["spaces, quotes and backslashes", ` two  spaces "double" 'single' back\\slash `],
  ["non-ASCII", "pässwörd 密码"],
  ["127 characters", LONG],
];

/** pdfinfo with the owner password (tools.ts's pdfinfo takes the user password). */
async function opensWithOwner(file: string, owner: string): Promise<boolean> {
  return (await run("pdfinfo", ["-opw", owner, file])).code === 0;
}

/** poppler's tools keep only a password's first 32 bytes, so they can check only short ones. */
const popplerCanTry = (password: string): boolean => Buffer.byteLength(password) <= 32;

/** qpdf --show-encryption's "name: allowed|not allowed" lines, as a map. */
function capabilities(show: string): Record<string, boolean> {
  const out: Record<string, boolean> = {};
  for (const m of show.matchAll(/^(.+): (allowed|not allowed)$/gm)) out[m[1]!] = m[2] === "allowed";
  return out;
}

describe("protect", () => {
  it.each(PASSWORDS)("should encrypt with AES-256 and a password with %s, openable only with a password", async (_why, password) => {
    expect(password.length).toBeLessThanOrEqual(127);
    const owner = `owner ${password}`.slice(0, 127);
    const res = ok(await runOp("protect", { user_password: password, owner_password: owner }, [doc], out()));
    const file = res.outputs[0]!.path;
    expect(res.outputs[0]!.filename).toBe("contract.pdf");
    expect((await run("qpdf", ["--requires-password", file])).code).toBe(0);
    const show = await showEncryption(file, password);
    expect(show).toMatch(/^R = 6$/m);
    expect(show).toMatch(/^stream encryption method: AESv3$/m);
    expect(show).toMatch(/Supplied password is user password/);
    expect(await showEncryption(file, owner)).toMatch(/Supplied password is owner password/);
    expect(await openWithPdfjs(file)).toEqual({ error: "PasswordException" });
    expect(await openWithPdfjs(file, "wrong")).toEqual({ error: "PasswordException" });
    expect(await openWithPdfjs(file, password)).toEqual({ pages: 3 });
    expect(await openWithPdfjs(file, owner)).toEqual({ pages: 3 });
    expect((await pdfinfo(file)).ok).toBe(false);
    if (popplerCanTry(password)) {
      const info = await pdfinfo(file, password);
      expect(info.ok).toBe(true);
      expect(info.Pages).toBe("3");
      expect(await pdftotext(file, password)).toContain("contract 2");
    }
    if (popplerCanTry(owner)) expect(await opensWithOwner(file, owner)).toBe(true);
    // Neither password is in the result or in the file's bytes. A needle of a few bytes turns up
    // in AES ciphertext by chance ("-x": about once in seven 10 KB files), so the bytes are
    // searched for the passwords of 8 bytes or more (the owner password always is).
    // The result names files under this test's temporary directory, whose random suffix can hold
    // a short password by chance ("folio-protect-x…" holds "-x"), so that directory is masked.
    expect(JSON.stringify(res).replaceAll(dir, "<dir>")).not.toContain(password);
    const bytes = await readFile(file);
    for (const secret of [password, owner].filter((p) => Buffer.byteLength(p) >= 8))
      expect(bytes.includes(Buffer.from(secret))).toBe(false);
  });

  it.each([
    ["a leading double dash", "--help"],
    ["Latin-1 letters", "pässwörd"],
    ["quotes and a backslash", `a"b'c\\d e`],
    ["32 characters", "0123456789abcdefghijklmnopqrstuv"],
  ])("should encrypt with AES-128 and a password with %s", async (_why, password) => {
    const res = ok(await runOp("protect", { user_password: password, owner_password: "own", encryption: "aes-128" }, [doc], out()));
    const file = res.outputs[0]!.path;
    const show = await showEncryption(file, password);
    expect(show).toMatch(/^R = 4$/m);
    expect(show).toMatch(/^stream encryption method: AESv2$/m);
    expect(await openWithPdfjs(file)).toEqual({ error: "PasswordException" });
    expect(await openWithPdfjs(file, password)).toEqual({ pages: 3 });
    expect((await pdfinfo(file)).ok).toBe(false);
    // poppler passes the password as UTF-8, where AES-128 wants PDFDocEncoding: ASCII ones only.
    if (/^[\x20-\x7e]*$/.test(password)) expect((await pdfinfo(file, password)).ok).toBe(true);
    expect(await opensWithOwner(file, "own")).toBe(true);
    expect(res.figures.encryption).toBe("aes-128");
  });

  const ALL = { print: "full", modify: true, copy: true, annotate: true, fill_forms: true, assemble: true, accessibility: true } as const;
  it.each([
    ["everything allowed by default", {}, {}],
    ["low-resolution printing only", { print: "low" }, { "print high resolution": false }],
    ["no printing", { print: "none" }, { "print low resolution": false, "print high resolution": false }],
    ["no modification", { modify: false }, { "modify other": false, "modify anything": false }],
    ["no copying", { copy: false }, { "extract for any purpose": false }],
    ["no annotations", { annotate: false }, { "modify annotations": false, "modify anything": false }],
    ["no form filling", { fill_forms: false }, { "modify forms": false, "modify anything": false }],
    ["no assembly", { assemble: false }, { "modify document assembly": false, "modify anything": false }],
    ["accessibility, which AES cannot withhold (ISO 32000-2 deprecates the bit)", { accessibility: false }, {}],
  ])("should set the permission flags for %s, with both AES variants", async (_why, permissions, denied) => {
    const allowed = {
      "extract for accessibility": true,
      "extract for any purpose": true,
      "print low resolution": true,
      "print high resolution": true,
      "modify document assembly": true,
      "modify forms": true,
      "modify annotations": true,
      "modify other": true,
      "modify anything": true,
    };
    for (const encryption of ["aes-256", "aes-128"]) {
      const res = ok(await runOp("protect", { user_password: "u", owner_password: "o", encryption, permissions }, [doc], out()));
      expect(capabilities(await showEncryption(res.outputs[0]!.path, "u"))).toEqual({ ...allowed, ...denied });
      expect(res.figures).toEqual({ encryption, permissions: { ...ALL, ...permissions, accessibility: true } });
    }
  });

  it("should make up an owner password when none is given, and never report it", async () => {
    const res = ok(await runOp("protect", { user_password: "reader" }, [doc], out()));
    const file = res.outputs[0]!.path;
    expect(await showEncryption(file, "reader")).toMatch(/Supplied password is user password/);
    // The user password is not also the owner password.
    expect(await opensWithOwner(file, "reader")).toBe(false);
    expect(Object.keys(res.figures).sort()).toEqual(["encryption", "permissions"]);
    expect(JSON.stringify(res)).not.toMatch(/password/);
  });

  it("should re-encrypt an input that has only an owner password", async () => {
    const locked = await ownerOnlyEncryptedPdf(doc, path.join(dir, "owner-only.pdf"));
    const res = ok(await runOp("protect", { user_password: "new" }, [locked], out()));
    expect((await pdfinfo(res.outputs[0]!.path, "new")).ok).toBe(true);
  });

  it("should refuse an input that needs a password to open", async () => {
    const locked = await encryptedPdf(doc, path.join(dir, "locked.pdf"), "old");
    expect(errorCode(await runOp("protect", { user_password: "new" }, [locked], out()))).toBe("encrypted_input");
  });

  it.each([
    ["an empty password", { user_password: "" }],
    ["a password over 127 characters", { user_password: "x".repeat(128) }],
    ["an AES-128 password over 32 characters", { user_password: "x".repeat(33), encryption: "aes-128" }],
    ["an AES-128 password outside Latin-1", { user_password: "密码", encryption: "aes-128" }],
  ])("should refuse %s as invalid options", async (_why, options) => {
    expect(errorCode(await runOp("protect", options, [doc], out()))).toBe("validation_failed");
  });
});

describe("protect keeps passwords off every command line", () => {
  it("should pass passwords to qpdf only in the 0600 job file, deleted when qpdf exits", async () => {
    const qpdf = await recordingQpdf(dir);
    // The recording wrapper writes beside itself, which the engines' sandbox forbids (core/sandbox.ts).
    const config = loadConfig({ FOLIO_QPDF: qpdf.path, FOLIO_LOG_LEVEL: "silent", FOLIO_SANDBOX: "none" });
    // The tricky shapes, each made unique with a nonce so that no other process's arguments
    // ("-x" is a common flag) can match by chance.
    const nonce = randomBytes(6).toString("hex");
    const secrets: string[] = [];
    for (const [i, [, shape]] of PASSWORDS.entries()) {
      const user = `${shape.slice(0, 127 - nonce.length)}${nonce}`;
      const owner = `owner-${i}-${nonce}-${shape}`.slice(0, 127);
      ok(await runOp("protect", { user_password: user, owner_password: owner }, [doc], out(), { config }));
      secrets.push(user, owner);
    }
    const argv = (await qpdf.argv()).flat().join("\n");
    const processes = await qpdf.processes();
    const jobs = await qpdf.jobFiles();
    // The recordings did see the runs: the job file argument, on qpdf's argv and in /proc.
    expect(argv).toContain("--job-json-file=");
    expect(processes).toContain("--job-json-file=");
    expect(jobs).toHaveLength(PASSWORDS.length);
    for (const secret of secrets) {
      expect(argv).not.toContain(secret);
      expect(processes).not.toContain(secret);
    }
    for (const job of jobs) {
      expect(job.mode).toBe("600");
      await expect(stat(job.file)).rejects.toThrow(/ENOENT/);
    }
  });
});
