/**
 * The images `make images` built (docker/images.txt → dist/images/<name>.oci.tar), as the test
 * platform loads them onto its node. Their references are the chart's: `folio/runner:<appVersion>`
 * and `folio/api:<appVersion>`. A missing archive stops the platform with the command that makes it.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "./versions.ts";

export interface BuiltImage {
  /** docker/images.txt's name: folio-runner, folio-api. */
  readonly name: string;
  readonly repository: string;
  /** `<repository>:<appVersion>`, what the chart and the controller's Job template name. */
  readonly ref: string;
  readonly archive: string;
  readonly dockerfile: string;
  readonly budgetMb: number;
}

/** The chart's appVersion: every image's tag. */
export function appVersion(): string {
  const m = /^appVersion:\s*"?([^"\s]+)"?/m.exec(readFileSync(join(REPO_ROOT, "helm", "folio", "Chart.yaml"), "utf8"));
  if (!m?.[1]) throw new Error("helm/folio/Chart.yaml has no appVersion");
  return m[1];
}

/**
 * Every image of docker/images.txt (whether built or not), or of another list of the same form
 * (docker/images-full.txt: `make images-full`).
 */
export function imageCatalogue(list = "images.txt"): BuiltImage[] {
  const version = appVersion();
  return readFileSync(join(REPO_ROOT, "docker", list), "utf8")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#"))
    .map((l) => {
      const [name = "", dockerfile = "", repository = "", budget = "0"] = l.split(/\s+/);
      return {
        name,
        repository,
        ref: `${repository}:${version}`,
        archive: join(REPO_ROOT, "dist", "images", `${name}.oci.tar`),
        dockerfile,
        budgetMb: Number(budget),
      };
    });
}

/** The built image called `name` (folio-runner …); throws naming `make images` when it is missing. */
export function builtImage(name: string, list = "images.txt"): BuiltImage {
  const image = imageCatalogue(list).find((i) => i.name === name);
  if (!image) throw new Error(`docker/${list} has no image ${name}`);
  const make = list === "images.txt" ? "make images" : "make images-full";
  if (!existsSync(image.archive)) throw new Error(`${image.archive} is missing: run "${make}" first`);
  return image;
}

/** The runner image's reference, as the controller's Job template names it. */
export const runnerImage = (): string => builtImage("folio-runner").ref;
/** The full runner image's reference (Chromium, OCRmyPDF, veraPDF; `make images-full`, ADR 0015). */
export const fullRunnerImage = (): string => builtImage("folio-runner-full", "images-full.txt").ref;
/** The API and controller image's reference. */
export const apiImage = (): string => builtImage("folio-api").ref;
