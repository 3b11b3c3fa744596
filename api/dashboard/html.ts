/**
 * HTML by tagged templates: every interpolated value is escaped unless it is already Html (made by
 * this same tag), so a filename, metadata value or access-request text is always shown as text.
 * Arrays are joined; null, undefined and false render nothing.
 */
export class Html {
  readonly value: string;
  constructor(value: string) {
    this.value = value;
  }
  toString(): string {
    return this.value;
  }
}

type Part = Html | string | number | boolean | null | undefined | readonly Part[];

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;", "`": "&#96;" };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (c) => ESCAPES[c]!);
}

function render(part: Part): string {
  if (part instanceof Html) return part.value;
  if (part === null || part === undefined || part === false || part === true) return "";
  if (Array.isArray(part)) return (part as readonly Part[]).map(render).join("");
  return escapeHtml(String(part));
}

export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  let out = strings[0] ?? "";
  for (let i = 0; i < values.length; i++) out += render(values[i]) + (strings[i + 1] ?? "");
  return new Html(out);
}

/** Trusted markup (never user data). */
export const raw = (s: string): Html => new Html(s);

/** Bytes as a short human figure (1.4 MB). */
export function bytes(n: number): string {
  if (n < 1000) return `${n} B`;
  const units = ["kB", "MB", "GB", "TB"];
  let v = n;
  let u = -1;
  while (v >= 1000 && u < units.length - 1) {
    v /= 1000;
    u++;
  }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[u]}`;
}

/** A time element the client script turns into local time ("3 min ago"); the text is UTC. */
export function time(ms: number | null | undefined): Html {
  if (ms === null || ms === undefined) return html`<span class="muted">—</span>`;
  const iso = new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
  return html`<time datetime="${iso}">${iso.replace("T", " ").replace("Z", " UTC")}</time>`;
}
