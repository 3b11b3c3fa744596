/**
 * Embedded files (ISO 32000-1 §7.11.4: the catalog's /Names /EmbeddedFiles name tree) carried
 * into a merged document. qpdf's page selection copies what pages reach — file attachment
 * annotations (§12.5.6.15) included — but not the document-level attachments.
 *
 * qpdf's own `--copy-attachments-from` fails on file specifications written as direct objects
 * ("QPDF::copyForeign called with direct object handle", qpdf 11.3, seen on py-pdf's
 * with-attachment.pdf) and on keys two inputs share; so each attachment's data is extracted
 * (pdf-json.ts, filters undone) and added back with `addAttachment` in one qpdf job, under its
 * own key, or "2-key", "3-key" … when an earlier input already used it. Name, description and
 * MIME type are kept.
 */
import { mkdir, rename, rm } from "node:fs/promises";
import path from "node:path";
import type { Logger } from "../../core/logger.ts";
import type { Attachment } from "./outline-read.ts";
import { extractStreams } from "./pdf-json.ts";
import { qpdfJob, type QpdfContext } from "../engines/qpdf.ts";

export interface AttachmentSource {
  file: string;
  attachments: readonly Attachment[];
}

/** Keys unique across inputs: the first input keeps its keys, later ones are numbered on collision. */
export function uniqueKeys(sources: readonly AttachmentSource[]): string[][] {
  const used = new Set<string>();
  return sources.map((s, i) =>
    s.attachments.map((a) => {
      let key = a.key;
      for (let n = i + 1; used.has(key); n++) key = `${n}-${a.key}`;
      used.add(key);
      return key;
    }),
  );
}

/**
 * Adds every input's embedded files to `pdf` (rewritten in place by qpdf, classic cross-reference
 * table kept for the outline writer). Returns how many were added; an attachment whose data
 * cannot be extracted is skipped with a warning, never the merge.
 */
export async function addAttachments(q: QpdfContext, pdf: string, sources: readonly AttachmentSource[], log: Logger): Promise<number> {
  if (!sources.some((s) => s.attachments.length)) return 0;
  const dir = path.join(q.work, "attachments");
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const keys = uniqueKeys(sources);
  const adds: Record<string, string>[] = [];
  for (const [i, s] of sources.entries()) {
    if (!s.attachments.length) continue;
    const sub = path.join(dir, String(i));
    await mkdir(sub, { mode: 0o700 });
    const data = await extractStreams(q, s.file, [...new Set(s.attachments.map((a) => a.contents))], sub);
    s.attachments.forEach((a, j) => {
      const got = data.get(a.contents);
      if (!got || got.dict["/Filter"] !== undefined) {
        log.warn({ key: a.key }, "Skipped an attachment whose data qpdf could not decode");
        return;
      }
      adds.push({
        file: got.file,
        key: keys[i]![j]!,
        filename: a.filename,
        ...(a.mimetype && /^[\w.+-]+\/[\w.+-]+$/.test(a.mimetype) ? { mimetype: a.mimetype } : {}),
        ...(a.description ? { description: a.description } : {}),
      });
    });
  }
  if (!adds.length) return 0;
  const out = path.join(dir, "with-attachments.pdf");
  await qpdfJob(q, {
    inputFile: pdf,
    outputFile: out,
    objectStreams: "disable",
    removeUnreferencedResources: "no",
    addAttachment: adds,
  });
  await rename(out, pdf);
  await rm(dir, { recursive: true, force: true });
  return adds.length;
}
