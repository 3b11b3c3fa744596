/**
 * protect: encrypts a PDF with AES-256 (PDF 2.0 security handler revision 6, the default) or
 * AES-128 (revision 4), a user password to open it, an owner password for full access, and
 * permission flags (ISO 32000-2 §7.6.4.2, Table 22).
 *
 * Passwords never reach a command line: qpdf gets the whole job as JSON through a 0600 file in
 * the job's private work directory (qpdfJob, qpdf manual "QPDF JSON job"), deleted as soon as
 * qpdf exits. That also makes passwords beginning with "-" or "--" work, which qpdf 11.3 reads as
 * options in the positional `--encrypt USER OWNER BITS` form. Neither passwords nor the job file
 * are ever logged, and the figures report the permissions, never a password.
 */
import { randomBytes } from "node:crypto";
import path from "node:path";
import type { ProtectOptions } from "../../core/schemas/options.ts";
import { commitOutput, discard, partialPath, type PdfOutputFile } from "./outfile.ts";
import { blameInput, qpdfJob } from "../engines/qpdf.ts";
import type { OpContext, OpDefinition, OpResult } from "./types.ts";

type Permissions = ProtectOptions["permissions"];
const yn = (allowed: boolean): "y" | "n" => (allowed ? "y" : "n");

/**
 * qpdf's restriction keys (qpdf --job-json-help, "encrypt" → "256bit"/"128bit") for our flags.
 *
 * - `modify` maps to qpdf's --modify-other (ISO bit 4), not to --modify=none: that one is a
 *   shorthand that also clears annotate, form and assemble, which have flags of their own here.
 * - `annotate` is bit 6 (comments, and form filling unless bit 9 says otherwise), `fill_forms`
 *   bit 9, `assemble` bit 11, `copy` bit 5 (--extract), `print` bits 3 and 12 (none/low/full).
 * - `accessibility` (bit 10) is not passed: ISO 32000-2 deprecates it and requires readers to
 *   treat it as set, and qpdf ignores --accessibility=n for AES (with a warning), so it cannot
 *   be restricted; the figures report it as allowed.
 */
export function qpdfRestrictions(p: Permissions): Record<string, string> {
  return {
    print: p.print,
    modifyOther: yn(p.modify),
    extract: yn(p.copy),
    annotate: yn(p.annotate),
    form: yn(p.fill_forms),
    assemble: yn(p.assemble),
  };
}

/** The permissions the output really grants (accessibility cannot be withheld, see above). */
export function effectivePermissions(p: Permissions): Permissions {
  return { ...p, accessibility: true };
}

/**
 * A random owner password, used when the client gives none and never returned: 32 random bytes
 * for AES-256; for AES-128, 24 bytes, because revision 4 only uses a password's first 32
 * characters and 24 bytes are exactly 32 in base64url.
 */
export function randomOwnerPassword(encryption: ProtectOptions["encryption"]): string {
  return randomBytes(encryption === "aes-256" ? 32 : 24).toString("base64url");
}

export const protect: OpDefinition<ProtectOptions> = {
  operation: "protect",
  accepts: "pdf",
  minInputs: 1,
  maxInputs: 1,
  async run(ctx: OpContext<ProtectOptions>): Promise<OpResult> {
    const o = ctx.options;
    const source = ctx.inputs[0]!;
    const tmp = partialPath(ctx.outDir, ".pdf");
    const restrictions = qpdfRestrictions(o.permissions);
    const encrypt =
      o.encryption === "aes-256"
        ? { "256bit": restrictions }
        : // Revision 4 with AES (AESV2); without useAes qpdf would write RC4.
          { "128bit": { ...restrictions, useAes: "y" } };
    try {
      const job = {
        inputFile: path.resolve(source.path),
        outputFile: tmp,
        encrypt: { userPassword: o.user_password, ownerPassword: o.owner_password ?? randomOwnerPassword(o.encryption), ...encrypt },
      };
      await qpdfJob({ qpdf: ctx.config.FOLIO_QPDF, work: ctx.work, signal: ctx.signal }, job).catch((err: unknown) => {
        throw blameInput(err, ctx.inputs);
      });
      const filename = `${ctx.baseName}.pdf`;
      const file: PdfOutputFile = {
        path: await commitOutput(tmp, ctx.outDir, filename),
        filename,
        content_type: "application/pdf",
        pages: source.pages ?? 0,
      };
      return { files: [file], figures: { encryption: o.encryption, permissions: effectivePermissions(o.permissions) } };
    } finally {
      await discard(tmp);
    }
  },
};
