/**
 * The edit steps, folded into one plan that a single qpdf run carries out (runner/ops/edit.ts).
 *
 * Steps apply in order, each to the document the previous ones left. Instead of rewriting the
 * file once per step, the plan keeps a virtual document: the list of output pages, each naming
 * its source page, the rotation added to it, and the marks (text, images) drawn on it, each
 * remembered with the rotation the page had when it was drawn. At the end the page list becomes
 * qpdf's `--pages`, the rotations its `--rotate`, and the marks one overlay and one underlay PDF.
 * Pure: no I/O, so the rules are unit-tested on their own.
 */
import { JobError } from "../../core/errors.ts";
import type { EditOptions, EditStep } from "../../core/schemas/edit-options.ts";
import { parsePageRanges, resolvePageRanges } from "../../core/pages.ts";

/** A mark as drawn: text (already resolved, placeholders filled) or an image input. */
export type Mark = {
  layer: "over" | "under";
  /** The page's displayed rotation (its /Rotate plus what earlier steps added) when the mark was drawn. */
  rotation: number;
  position: string;
  opacity: number;
  angle: number;
  margin: number;
} & ({ kind: "text"; text: string; fontSize: number; color: string } | { kind: "image"; input: number; widthShare: number });

export interface PlannedPage {
  /** 1-based page of the input. */
  src: number;
  /** Clockwise degrees added to the page's own /Rotate (0, 90, 180, 270). */
  added: number;
  marks: Mark[];
}

export interface EditPlan {
  pages: PlannedPage[];
  /** The page list differs from the input's 1..N in order. */
  reordered: boolean;
  flatten: boolean;
  decrypt: boolean;
  repair: boolean;
  /** Document information entries to set (string) or remove (null), as "Title", "Author", … */
  info: Record<string, string | null>;
}

/** The input's own /Rotate per page (1-based index → degrees), for marks drawn on rotated pages. */
export type SourceRotation = (src: number) => number;

const norm = (deg: number): number => ((deg % 360) + 360) % 360;

function resolve(spec: string | undefined, count: number, step: number): number[] {
  if (spec === undefined) return Array.from({ length: count }, (_, i) => i);
  const parsed = parsePageRanges(spec);
  const pages = typeof parsed === "string" ? parsed : resolvePageRanges(parsed, count);
  if (typeof pages === "string") throw new JobError("invalid_page_range", `Step ${step + 1}: pages "${spec}": ${pages}.`);
  return pages.flat().map((p) => p - 1);
}

function fill(template: string, n: number, total: number): string {
  return template.replaceAll("{n}", String(n)).replaceAll("{total}", String(total));
}

const INFO_KEYS = { title: "Title", author: "Author", subject: "Subject", keywords: "Keywords", creator: "Creator", producer: "Producer" };

/** Numbering of page_numbers and header_footer: which pages get a number, and which. */
function numbered(step: Step<"page_numbers" | "header_footer">, count: number, i: number): [number, number][] {
  let targets = resolve(step.pages, count, i);
  if (step.skip_first) targets = targets.slice(1);
  return targets.map((p, k) => [p, step.start + k]);
}

type Step<T extends EditStep["type"]> = Extract<EditStep, { type: T }>;

/** watermark and stamp: one mark per targeted page, drawn as the page is displayed now. */
function markPages(
  step: Step<"watermark" | "stamp">,
  i: number,
  pages: PlannedPage[],
  shown: (p: PlannedPage) => number,
  images: number,
): void {
  if (step.image_input !== undefined && step.image_input > images) {
    throw new JobError("unsupported_input", `Step ${i + 1}: image_input ${step.image_input} is not among the job's inputs.`);
  }
  const base = {
    layer: step.type === "stamp" ? "over" : "under",
    position: step.position,
    opacity: step.opacity,
    angle: step.rotation,
    margin: step.margin,
  } as const;
  for (const k of resolve(step.pages, pages.length, i)) {
    const p = pages[k]!;
    p.marks.push(
      step.text !== undefined
        ? { ...base, rotation: shown(p), kind: "text", text: step.text, fontSize: step.font_size, color: step.color }
        : { ...base, rotation: shown(p), kind: "image", input: step.image_input!, widthShare: step.image_width },
    );
  }
}

/** page_numbers and header_footer: text with {n} and {total} filled in, on the numbered pages. */
function numberPages(
  step: Step<"page_numbers" | "header_footer">,
  i: number,
  pages: PlannedPage[],
  shown: (p: PlannedPage) => number,
): void {
  const targets = numbered(step, pages.length, i);
  const total = targets.length ? targets[targets.length - 1]![1] : 0;
  const bands: [string, string | undefined][] =
    step.type === "page_numbers"
      ? [[step.position, step.format]]
      : [
          ["top-left", step.header?.left],
          ["top", step.header?.center],
          ["top-right", step.header?.right],
          ["bottom-left", step.footer?.left],
          ["bottom", step.footer?.center],
          ["bottom-right", step.footer?.right],
        ];
  const style = {
    layer: "over",
    opacity: 1,
    angle: 0,
    margin: step.margin,
    kind: "text",
    fontSize: step.font_size,
    color: step.color,
  } as const;
  for (const [k, n] of targets) {
    const p = pages[k]!;
    for (const [position, template] of bands) {
      if (template !== undefined) p.marks.push({ ...style, rotation: shown(p), position, text: fill(template, n, total) });
    }
  }
}

/** Folds the steps into a plan for a document of `pageCount` pages. Throws JobError for impossible steps. */
export function planEdit(options: EditOptions, pageCount: number, sourceRotation: SourceRotation, imageInputs: number): EditPlan {
  let pages: PlannedPage[] = Array.from({ length: pageCount }, (_, i) => ({ src: i + 1, added: 0, marks: [] }));
  const plan: Omit<EditPlan, "pages" | "reordered"> = { flatten: false, decrypt: false, repair: false, info: {} };
  const shown = (p: PlannedPage): number => norm(sourceRotation(p.src) + p.added);
  for (const [i, step] of options.steps.entries()) {
    switch (step.type) {
      case "rotate":
        for (const p of new Set(resolve(step.pages, pages.length, i))) pages[p]!.added = norm(pages[p]!.added + step.angle);
        break;
      case "delete": {
        const gone = new Set(resolve(step.pages, pages.length, i));
        pages = pages.filter((_, k) => !gone.has(k));
        if (pages.length === 0) throw new JobError("invalid_page_range", `Step ${i + 1}: deleting pages "${step.pages}" leaves no page.`);
        break;
      }
      case "select":
        // A page taken twice becomes two pages: later steps may mark them differently.
        pages = resolve(step.pages, pages.length, i).map((k) => ({ ...pages[k]!, marks: [...pages[k]!.marks] }));
        break;
      case "watermark":
      case "stamp":
        markPages(step, i, pages, shown, imageInputs);
        break;
      case "page_numbers":
      case "header_footer":
        numberPages(step, i, pages, shown);
        break;
      case "metadata":
        for (const [key, name] of Object.entries(INFO_KEYS)) {
          const value = step[key as keyof typeof INFO_KEYS];
          if (value !== undefined) plan.info[name] = value;
        }
        break;
      default:
        // flatten, unlock, repair: whole-document switches.
        plan[({ flatten: "flatten", unlock: "decrypt", repair: "repair" } as const)[step.type]] = true;
    }
  }
  const reordered = pages.length !== pageCount || pages.some((p, k) => p.src !== k + 1);
  return { ...plan, pages, reordered };
}
