/**
 * Encodes a page's images as PNG as soon as the page is analysed, so that a document's raw pixels
 * are never all in memory at once (a 60-page scan is 1.5 GB of them). Each image is scaled down
 * to at most MAX_DPI at the size it is placed on the page: more detail than that does not show in
 * a Word document and only makes it heavier. Placements of one image share its pixels and are
 * encoded once.
 */
import sharp from "sharp";
import type { PageImage, PngImage } from "./types.ts";

/** Resolution images keep in the DOCX, in pixels per inch of their placed size. */
const MAX_DPI = 150;

async function encode(im: PageImage): Promise<Buffer | null> {
  const width = Math.max(1, Math.round(((im.x1 - im.x0) / 72) * MAX_DPI));
  const height = Math.max(1, Math.round(((im.y1 - im.y0) / 72) * MAX_DPI));
  try {
    return await sharp(im.pixels, { raw: { width: im.width, height: im.height, channels: im.channels } })
      .resize({ width: Math.min(width, im.width), height: Math.min(height, im.height), fit: "fill" })
      .png()
      .toBuffer();
  } catch {
    // Pixels sharp cannot read (a size that does not match the data): the image is left out.
    return null;
  }
}

/** A PNG encoder for one page: same pixels, same PNG. */
export function pageEncoder(): (im: PageImage) => Promise<PngImage | null> {
  const done = new Map<Uint8Array, Promise<Buffer | null>>();
  return async (im) => {
    let png = done.get(im.pixels);
    if (!png) {
      png = encode(im);
      done.set(im.pixels, png);
    }
    const data = await png;
    return data ? { x0: im.x0, y0: im.y0, x1: im.x1, y1: im.y1, png: data } : null;
  };
}
