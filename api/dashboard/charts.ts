/**
 * Server-rendered SVG bar charts: no chart library, no script, colours from the stylesheet
 * (classes s0…s7), an accessible name, and a <title> per bar for the exact figure.
 */
import { html, type Html } from "./html.ts";

export interface Series {
  name: string;
  values: number[];
}

const W = 720;
const H = 160;
const PAD = 28;

export function stackedBars(label: string, days: string[], series: Series[], unit = ""): Html {
  const totals = days.map((_, i) => series.reduce((a, s) => a + (s.values[i] ?? 0), 0));
  const max = Math.max(1, ...totals);
  const bw = (W - PAD) / Math.max(1, days.length);
  const bars: Html[] = [];
  days.forEach((day, i) => {
    let y = H - PAD;
    series.forEach((s, k) => {
      const v = s.values[i] ?? 0;
      if (!v) return;
      const h = Math.max(1, ((H - PAD * 1.5) * v) / max);
      y -= h;
      bars.push(
        html`<rect
          class="s${k % 8}"
          x="${(PAD + i * bw + 1).toFixed(1)}"
          y="${y.toFixed(1)}"
          width="${Math.max(1, bw - 2).toFixed(1)}"
          height="${h.toFixed(1)}"
          ><title>${day} · ${s.name}: ${v}${unit}</title></rect
        >`,
      );
    });
  });
  const legend = series.map((s, k) => html`<li><span class="swatch s${k % 8}"></span>${s.name}</li>`);
  return html`<figure class="chart">
    <svg viewBox="0 0 ${W} ${H}" role="img" aria-label="${label}">
      <line class="axis" x1="${PAD}" y1="${H - PAD}" x2="${W}" y2="${H - PAD}"></line>
      <text class="tick" x="0" y="${PAD / 2 + 4}">${Math.round(max)}${unit}</text>
      <text class="tick" x="${PAD}" y="${H - 8}">${days[0] ?? ""}</text>
      <text class="tick" x="${W - 70}" y="${H - 8}">${days.at(-1) ?? ""}</text>
      ${bars}
    </svg>
    <figcaption>${label}</figcaption>
    ${
      series.length > 1
        ? html`<ul class="legend">
            ${legend}
          </ul>`
        : ""
    }
  </figure>`;
}
