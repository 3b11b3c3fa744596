/**
 * The dashboard's two assets (one stylesheet, one ES module), read once from ./assets next to this
 * module (make build copies them into dist), served with a content hash ETag and a short cache.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import express, { type Router } from "express";

const FILES: Record<string, string> = { "app.css": "text/css; charset=utf-8", "app.js": "text/javascript; charset=utf-8" };

export function assetsRouter(): Router {
  const r = express.Router();
  const assets = new Map<string, { body: Buffer; type: string; etag: string }>();
  for (const [name, type] of Object.entries(FILES)) {
    const body = readFileSync(new URL(`./assets/${name}`, import.meta.url));
    assets.set(name, { body, type, etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"` });
  }
  r.get("/:name", (req, res, next) => {
    const a = assets.get(req.params.name);
    if (!a) return next();
    res.setHeader("Content-Type", a.type);
    res.setHeader("ETag", a.etag);
    res.setHeader("Cache-Control", "public, max-age=300");
    res.setHeader("X-Content-Type-Options", "nosniff");
    if (req.get("If-None-Match") === a.etag) return void res.status(304).end();
    res.send(a.body);
  });
  return r;
}
