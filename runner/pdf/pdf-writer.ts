/**
 * A minimal PDF writer (ISO 32000-1 §7.5: header, body, classic cross-reference table, trailer)
 * for the pages Folio draws itself: overlay and underlay pages of edit (page numbers on a 5,000-
 * page document are 5,000 small pages; pdf-lib takes seconds for that, writing the syntax takes
 * milliseconds) and the pages of images → PDF. Pages hold text in the standard Helvetica font,
 * images and opacity states, nothing else.
 *
 * Every page shares one resource dictionary: /F1 (Helvetica, WinAnsiEncoding — a standard 14
 * font, §9.6.2.2, so nothing is embedded), /G<n> ExtGStates for opacities, /Im<n> images. The
 * file is written as it goes and images are loaded one at a time, so a job of many large images
 * holds one in memory, not all.
 */
import { open } from "node:fs/promises";
import { deflateSync } from "node:zlib";

export type PdfImage =
  /** A JPEG passed through as is (DCTDecode): no loss, no decoding. */
  | { kind: "jpeg"; data: Buffer; width: number; height: number; components: 1 | 3 | 4 }
  /** 8-bit gray or RGB pixels, and optionally an 8-bit alpha channel (a soft mask, §11.6.5.3). */
  | { kind: "raw"; pixels: Buffer; channels: 1 | 3; alpha: Buffer | null; width: number; height: number };

export interface PdfPage {
  width: number;
  height: number;
  /** Content stream operators (PDF syntax, Latin-1). */
  content: string;
}

export interface PdfDoc {
  pages: PdfPage[];
  /** Opacities used: each is the ExtGState named gsName(value). */
  opacities: ReadonlySet<number>;
  /** Images by resource name (Im0, Im1, …), loaded when they are written. */
  images: ReadonlyMap<string, () => Promise<PdfImage>>;
}

/** The ExtGState resource name for an opacity. */
export const gsName = (opacity: number): string => `G${Math.round(opacity * 1000)}`;

/** A number in PDF syntax: at most 4 decimals, no exponent. */
export const num = (n: number): string => {
  const r = Math.round(n * 10000) / 10000;
  return Object.is(r, -0) ? "0" : String(r);
};

function imageDict(img: PdfImage, smask: string): string {
  const head = `/Type /XObject /Subtype /Image /Width ${img.width} /Height ${img.height} /BitsPerComponent 8`;
  if (img.kind === "raw") return `${head} /ColorSpace ${img.channels === 1 ? "/DeviceGray" : "/DeviceRGB"} /Filter /FlateDecode${smask}`;
  const cs = img.components === 1 ? "/DeviceGray" : img.components === 4 ? "/DeviceCMYK" : "/DeviceRGB";
  // Adobe writes CMYK JPEGs inverted; this /Decode undoes it, as readers expect (§8.9.5.2).
  return `${head} /ColorSpace ${cs}${img.components === 4 ? " /Decode [1 0 1 0 1 0 1 0]" : ""} /Filter /DCTDecode`;
}

/** Writes `doc` to a new file (it must not exist). */
export async function writePdf(file: string, doc: PdfDoc): Promise<void> {
  const fh = await open(file, "wx", 0o600);
  let length = 0;
  const offsets: number[] = [];
  const push = async (data: string | Buffer): Promise<void> => {
    const b = typeof data === "string" ? Buffer.from(data, "latin1") : data;
    await fh.write(b);
    length += b.length;
  };
  const object = async (id: number, body: string): Promise<void> => {
    offsets[id] = length;
    await push(`${id} 0 obj\n${body}\nendobj\n`);
  };
  const stream = async (id: number, dict: string, data: Buffer): Promise<void> => {
    offsets[id] = length;
    await push(`${id} 0 obj\n<< ${dict} /Length ${data.length} >>\nstream\n`);
    await push(data);
    await push("\nendstream\nendobj\n");
  };
  try {
    await push("%PDF-1.7\n%\u00e2\u00e3\u00cf\u00d3\n");
    // 1 catalog, 2 page tree, 3 font, 4 resources; then images; then each page and its content.
    let next = 5;
    const xobjects: string[] = [];
    for (const [name, load] of doc.images) {
      const img = await load();
      const id = next++;
      let smask = "";
      if (img.kind === "raw" && img.alpha) {
        const maskId = next++;
        await stream(
          maskId,
          `/Type /XObject /Subtype /Image /Width ${img.width} /Height ${img.height} /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode`,
          deflateSync(img.alpha),
        );
        smask = ` /SMask ${maskId} 0 R`;
      }
      await stream(id, imageDict(img, smask), img.kind === "raw" ? deflateSync(img.pixels) : img.data);
      xobjects.push(`/${name} ${id} 0 R`);
    }
    const gstates = [...doc.opacities].map((o) => `/${gsName(o)} << /Type /ExtGState /ca ${num(o)} /CA ${num(o)} >>`);
    await object(3, "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>");
    await object(4, `<< /Font << /F1 3 0 R >> /ExtGState << ${gstates.join(" ")} >> /XObject << ${xobjects.join(" ")} >> >>`);
    const kids: string[] = [];
    // Pages in batches: one write per few hundred pages instead of two per page.
    let batch: string[] = [];
    let batchLength = 0;
    const add = (text: string): void => {
      batch.push(text);
      batchLength += Buffer.byteLength(text, "latin1");
    };
    const flush = async (): Promise<void> => {
      if (batch.length) await push(batch.join(""));
      batch = [];
      batchLength = 0;
    };
    for (const page of doc.pages) {
      const pageId = next++;
      const contentId = next++;
      kids.push(`${pageId} 0 R`);
      offsets[pageId] = length + batchLength;
      add(
        `${pageId} 0 obj\n<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${num(page.width)} ${num(page.height)}] /Resources 4 0 R /Contents ${contentId} 0 R >>\nendobj\n`,
      );
      offsets[contentId] = length + batchLength;
      add(`${contentId} 0 obj\n<< /Length ${Buffer.byteLength(page.content, "latin1")} >>\nstream\n${page.content}\nendstream\nendobj\n`);
      if (batch.length >= 400) await flush();
    }
    await flush();
    await object(1, "<< /Type /Catalog /Pages 2 0 R >>");
    await object(2, `<< /Type /Pages /Kids [${kids.join(" ")}] /Count ${kids.length} >>`);
    const xref = length;
    const rows = ["0000000000 65535 f \n"];
    for (let i = 1; i < next; i++) rows.push(`${String(offsets[i] ?? 0).padStart(10, "0")} 00000 n \n`);
    await push(`xref\n0 ${next}\n${rows.join("")}trailer\n<< /Size ${next} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`);
  } finally {
    await fh.close();
  }
}
