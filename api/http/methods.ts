/**
 * 405 Method Not Allowed with `Allow` (RFC 9110 §15.5.6) for a known path asked with a method it
 * does not take, instead of a 404 that says the path does not exist (issue #10 item 17). The
 * known paths and their methods come from the OpenAPI document the server serves, plus the
 * service endpoints it does not describe.
 */
type Json = Record<string, unknown>;

const SERVICE_PATHS: Record<string, string[]> = {
  "/healthz": ["GET"],
  "/readyz": ["GET"],
  "/metrics": ["GET"],
  "/docs": ["GET"],
  "/v1/openapi.json": ["GET"],
};
const HTTP_METHODS = ["get", "put", "post", "delete", "patch"];

export interface MethodTable {
  /** The methods `path` takes (HEAD with GET), or null for an unknown path. */
  allowed(path: string): string[] | null;
}

export function methodTable(openapi: Json): MethodTable {
  const routes: { re: RegExp; methods: string[] }[] = [];
  const add = (template: string, methods: string[]): void => {
    const pattern = template.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{[^}]+\}/g, "[^/]+");
    const withHead = methods.includes("GET") ? [...methods, "HEAD"] : methods;
    routes.push({ re: new RegExp(`^${pattern}/?$`), methods: withHead });
  };
  for (const [p, item] of Object.entries((openapi.paths ?? {}) as Record<string, Json>)) {
    add(
      p,
      Object.keys(item)
        .filter((m) => HTTP_METHODS.includes(m))
        .map((m) => m.toUpperCase()),
    );
  }
  for (const [p, methods] of Object.entries(SERVICE_PATHS)) add(p, methods);
  return {
    allowed(path) {
      const methods = routes.filter((r) => r.re.test(path)).flatMap((r) => r.methods);
      return methods.length ? [...new Set(methods)] : null;
    },
  };
}
