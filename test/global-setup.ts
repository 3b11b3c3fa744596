/** Runs once before the suite: checks the engines the tests rely on are installed. */
import { execFileSync } from "node:child_process";

export default function setup(): void {
  for (const [cmd, arg] of [
    ["qpdf", "--version"],
    ["pdfinfo", "-v"],
    ["pdftotext", "-v"],
    ["pdftoppm", "-v"],
    ["soffice", "--version"],
  ] as const) {
    try {
      execFileSync(cmd, [arg], { stdio: "ignore" });
    } catch {
      throw new Error(`${cmd} is not installed; run "make setup"`);
    }
  }
}
