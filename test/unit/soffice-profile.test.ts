/**
 * LibreOffice's link-update settings mean "never" (issue #10 item 17). The two applications use
 * different enumerations: Writer's UpdateLinks (sw/inc/linkenum.hxx: NEVER 0, MANUAL 1,
 * AUTOMATIC 2) and Calc's ScLkUpdMode (sc/inc/global.hxx: LM_ALWAYS 0, LM_NEVER 1, LM_ON_DEMAND 2).
 */
import { describe, expect, it } from "vitest";
import { registryModifications } from "../../runner/engines/soffice-profile.ts";

const WRITER_NEVER = 0;
const CALC_NEVER = 1;

function value(xml: string, path: string, name: string): string | undefined {
  const re = new RegExp(`<item oor:path="${path}"><prop oor:name="${name}" oor:op="fuse"><value>([^<]*)</value>`);
  return re.exec(xml)?.[1];
}

describe("the LibreOffice profile", () => {
  const xml = registryModifications();
  it("never updates links in Writer documents", () => {
    expect(value(xml, "/org.openoffice.Office.Writer/Content/Update", "Link")).toBe(String(WRITER_NEVER));
  });
  it("never updates links in Calc documents", () => {
    expect(value(xml, "/org.openoffice.Office.Calc/Content/Update", "Link")).toBe(String(CALC_NEVER));
  });
});
