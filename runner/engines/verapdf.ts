/**
 * PDF/A validation by veraPDF (the reference validator the PDF Association endorses), run from its
 * command-line jar (Maven Central: org.verapdf.apps:greenfield-apps; bin/fetch-verapdf installs
 * it, docs/adr/0017). Every PDF/A Folio writes is validated against the profile of the part and
 * level asked for; a file that does not validate fails the job (`conversion_failed`, naming the
 * clauses of ISO 19005 it breaks) instead of being delivered as PDF/A. The summary goes into the
 * job's result.
 */
import { existsSync } from "node:fs";
import { copyFile, rm } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { JobError } from "../../core/errors.ts";
import type { PdfaTarget } from "../../core/schemas/convert-options.ts";
import type { Config } from "../../core/config.ts";
import type { Logger } from "../../core/logger.ts";
import { exec } from "./exec.ts";

export interface PdfaValidation {
  validator: string;
  profile: string;
  compliant: true;
  passed_rules: number;
  passed_checks: number;
}

interface RuleSummary {
  specification?: string;
  clause?: string;
  testNumber?: number;
  description?: string;
}

/**
 * Folio's directory: the nearest one above this module holding package.json — the checkout when
 * run from the sources, and also when run from the compiled dist/ (bin/folio), whose "../.." is dist.
 */
const ROOT = ((): string => {
  let dir = fileURLToPath(new URL(".", import.meta.url));
  while (!existsSync(path.join(dir, "package.json")) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  return dir;
})();

/** The jar, a relative FOLIO_VERAPDF_JAR taken from Folio's directory. */
export function verapdfJar(config: Pick<Config, "FOLIO_VERAPDF_JAR">): string {
  return path.isAbsolute(config.FOLIO_VERAPDF_JAR) ? config.FOLIO_VERAPDF_JAR : path.join(ROOT, config.FOLIO_VERAPDF_JAR);
}

/** The part of a veraPDF validation result Folio reads. */
interface VerapdfResult {
  compliant?: boolean;
  profileName?: string;
  details?: { passedRules?: number; passedChecks?: number; ruleSummaries?: RuleSummary[] };
}

/** veraPDF's JSON report: the build's version and the first job's result (none when the output is no such report). */
function parseReport(stdout: string): { version: string; result: VerapdfResult | undefined } {
  let version = "veraPDF";
  try {
    const report = (
      JSON.parse(stdout) as {
        report: { buildInformation?: { releaseDetails?: { id: string; version: string }[] }; jobs: { validationResult?: unknown[] }[] };
      }
    ).report;
    const core = report.buildInformation?.releaseDetails?.find((d) => d.id === "core");
    if (core) version = `veraPDF ${core.version}`;
    return { version, result: report.jobs[0]?.validationResult?.[0] as VerapdfResult | undefined };
  } catch {
    return { version, result: undefined };
  }
}

/** The clauses the first failed rules come from, for the message. */
function brokenClauses(result: VerapdfResult): string {
  const broken = (result.details?.ruleSummaries ?? []).slice(0, 5).map((r) => `${r.specification ?? "ISO 19005"} ${r.clause ?? "?"}`);
  return [...new Set(broken)].join(", ") || "the profile";
}

/** Validates `file` as `target`; returns the summary, or throws conversion_failed when it does not conform. */
export async function validatePdfa(
  ctx: { config: Config; signal: AbortSignal; log: Logger },
  file: string,
  target: PdfaTarget,
): Promise<PdfaValidation> {
  const installed = verapdfJar(ctx.config);
  if (!existsSync(installed)) throw new Error(`veraPDF is not installed at ${installed} (bin/fetch-verapdf)`);
  // The engine sandbox (core/sandbox.ts) shows an engine the system and its job's directories
  // only: the jar goes into the job's work directory, next to the file it validates.
  const jar = path.join(path.dirname(file), `.verapdf-${process.pid}-${Date.now()}.jar`);
  await copyFile(installed, jar);
  const flavour = target.slice("pdf/a-".length); // "1b", "2b", "3b"
  const args = [
    "-Xmx512m",
    "-XX:+UseSerialGC",
    "-cp",
    jar,
    "org.verapdf.apps.GreenfieldCliWrapper",
    "--flavour",
    flavour,
    "--format",
    "json",
    file,
  ];
  const res = await exec(ctx.config.FOLIO_JAVA, args, { signal: ctx.signal, maxOutput: 32 * 1024 * 1024 }).finally(() =>
    rm(jar, { force: true }),
  );
  const { version, result } = parseReport(res.stdout);
  if (!result || typeof result.compliant !== "boolean") {
    ctx.log.error({ code: res.code, stderr: res.stderr.slice(-2000) }, "veraPDF gave no verdict");
    throw new Error(`veraPDF gave no verdict (exit ${res.code})`);
  }
  if (!result.compliant) {
    throw new JobError(
      "conversion_failed",
      `The output does not validate as PDF/A-${flavour.toUpperCase()} (${version}): it breaks ${brokenClauses(result)}.`,
    );
  }
  return {
    validator: version,
    profile: result.profileName ?? `PDF/A-${flavour.toUpperCase()}`,
    compliant: true,
    passed_rules: result.details?.passedRules ?? 0,
    passed_checks: result.details?.passedChecks ?? 0,
  };
}
