/** Small PDFs for API tests, made with pdf-lib (the operations themselves are tested in test/runner). */
import { PDFDocument, StandardFonts } from "pdf-lib";

export async function textPdf(pages: number, label: string): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let i = 1; i <= pages; i++) doc.addPage([300, 300]).drawText(`${label} ${i}`, { x: 30, y: 150, size: 24, font });
  return doc.save();
}
