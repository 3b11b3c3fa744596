/**
 * Each page's displayed geometry, read by poppler's pdfinfo (`-box`): the TrimBox (which falls
 * back to the CropBox and the MediaBox, ISO 32000-1 §14.11.2) and the /Rotate. The TrimBox is the
 * rectangle qpdf fits an overlay page into, upright on the page as displayed.
 *
 * pdfinfo reads the page tree lazily and answers for 5,000 pages in about 0.1 s. It takes no
 * password file, so a document that needs a user password is decrypted into the job's work
 * directory first by the caller.
 */
import { JobError } from "../../core/errors.ts";
import { exec } from "../engines/exec.ts";

export interface PageBox {
  width: number;
  height: number;
  /** The CropBox: what a renderer shows. */
  cropWidth: number;
  cropHeight: number;
  /** /Rotate, normalised to 0, 90, 180 or 270. */
  rotate: number;
}

/** Parses `pdfinfo -box -f 1 -l N` output into N page boxes. */
export function parsePageBoxes(text: string, pages: number): PageBox[] | null {
  const out: PageBox[] = Array.from({ length: pages }, () => ({ width: 0, height: 0, cropWidth: 0, cropHeight: 0, rotate: 0 }));
  const seen = new Set<number>();
  for (const line of text.split("\n")) {
    const rot = /^Page\s+(\d+) rot:\s+(-?\d+)/.exec(line);
    if (rot) {
      const box = out[Number(rot[1]) - 1];
      const r = ((Number(rot[2]) % 360) + 360) % 360;
      // /Rotate must be a multiple of 90 (§7.7.3.3); readers round anything else down.
      if (box) box.rotate = r - (r % 90);
      continue;
    }
    const m = /^Page\s+(\d+) (TrimBox|CropBox):\s+(-?[\d.]+)\s+(-?[\d.]+)\s+(-?[\d.]+)\s+(-?[\d.]+)/.exec(line);
    if (!m) continue;
    const i = Number(m[1]) - 1;
    const box = out[i];
    if (!box) continue;
    const w = Math.abs(Number(m[5]) - Number(m[3]));
    const h = Math.abs(Number(m[6]) - Number(m[4]));
    if (m[2] === "CropBox") {
      box.cropWidth = w;
      box.cropHeight = h;
    } else {
      box.width = w;
      box.height = h;
      seen.add(i);
    }
  }
  return seen.size === pages && out.every((b) => b.width > 0 && b.height > 0) ? out : null;
}

/** The boxes of every page of `file` (which must open without a password). */
export async function pageBoxes(file: string, pages: number, signal: AbortSignal): Promise<PageBox[]> {
  const res = await exec("pdfinfo", ["-box", "-f", "1", "-l", String(pages), file], { signal, maxOutput: 64 * 1024 * 1024 });
  const boxes = res.code === 0 ? parsePageBoxes(res.stdout, pages) : null;
  if (!boxes) throw new JobError("invalid_pdf", "The size of a page could not be read.");
  return boxes;
}
