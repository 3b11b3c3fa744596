/**
 * The private world of one soffice: its user profile (with Folio's security settings), its HOME and
 * TMPDIR, its environment, and the small documents that keep a warm office alive and warm it up.
 * Warm instances and cold one-shot conversions both start from here, so both run with the same
 * hardening.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";

/** Flags every soffice we start gets: no UI, no crash-recovery dialog, no splash, no start centre. */
export const SOFFICE_FLAGS = ["--headless", "--invisible", "--norestore", "--nologo", "--nodefault", "--nolockcheck"] as const;

/**
 * Profile settings, as LibreOffice's registrymodifications.xcu items. Paths checked against the
 * 7.4 schema (share/registry/main.xcd). Why each one:
 *  - macros never run: security level 3 ("very high": only signed macros from trusted locations,
 *    and there are none) and DisableMacrosExecution, which switches Basic and scripts off entirely;
 *  - no linked content is fetched: Writer's and Calc's link updates set to "never", and untrusted
 *    referer links blocked. The two enumerations differ: Writer's is sw/inc/linkenum.hxx
 *    (NEVER 0, MANUAL 1, AUTOMATIC 2 — 2 meant "always", issue #10 item 17), Calc's is ScLkUpdMode
 *    in sc/inc/global.hxx (LM_ALWAYS 0, LM_NEVER 1, LM_ON_DEMAND 2);
 *  - no lock files next to documents (a stale one makes a later open fail), no autosave, no
 *    recovery data: a conversion leaves nothing behind and never waits on a dialog.
 */
const SETTINGS: readonly (readonly [string, string, string])[] = [
  ["/org.openoffice.Office.Common/Security/Scripting", "MacroSecurityLevel", "3"],
  ["/org.openoffice.Office.Common/Security/Scripting", "DisableMacrosExecution", "true"],
  ["/org.openoffice.Office.Common/Security/Scripting", "BlockUntrustedRefererLinks", "true"],
  ["/org.openoffice.Office.Writer/Content/Update", "Link", "0"],
  ["/org.openoffice.Office.Calc/Content/Update", "Link", "1"],
  ["/org.openoffice.Office.Common/Misc", "UseLocking", "false"],
  ["/org.openoffice.Office.Common/Misc", "UseDocumentSystemFileLocking", "false"],
  ["/org.openoffice.Office.Common/Misc", "UseOpenCL", "false"],
  ["/org.openoffice.Office.Recovery/AutoSave", "Enabled", "false"],
  ["/org.openoffice.Office.Recovery/RecoveryInfo", "Enabled", "false"],
];

export function registryModifications(): string {
  const items = SETTINGS.map(
    ([p, name, value]) => `<item oor:path="${p}"><prop oor:name="${name}" oor:op="fuse"><value>${value}</value></prop></item>`,
  );
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">',
    ...items,
    "</oor:items>",
    "",
  ].join("\n");
}

const NS =
  'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" ' +
  'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" ' +
  'xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0"';
const flat = (mime: string, body: string): string =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<office:document ${NS} office:version="1.3" office:mimetype="application/vnd.oasis.opendocument.${mime}"><office:body>${body}</office:body></office:document>\n`;

/** Tiny flat-ODF documents (ODF 1.3 part 3, §2.2 single XML document): one per LibreOffice module. */
const SEED_DOCS = {
  "keepalive.fodt": flat("text", "<office:text><text:p>Folio keeps this office warm.</text:p></office:text>"),
  "warmup-calc.fods": flat(
    "spreadsheet",
    '<office:spreadsheet><table:table table:name="S"><table:table-row><table:table-cell office:value-type="float" office:value="1"><text:p>1</text:p></table:table-cell></table:table-row></table:table></office:spreadsheet>',
  ),
  "warmup-impress.fodp": flat(
    "presentation",
    '<office:presentation><draw:page draw:name="p1"><draw:frame svg:x="2cm" svg:y="2cm" svg:width="10cm" svg:height="3cm"><draw:text-box><text:p>Folio</text:p></draw:text-box></draw:frame></draw:page></office:presentation>',
  ),
} as const;

export interface SofficeDirs {
  root: string;
  /** -env:UserInstallation value (a file URL). */
  profileUrl: string;
  home: string;
  tmp: string;
  /**
   * The document a warm office keeps open. Without an open document, LibreOffice's dispatch
   * watcher terminates the office after the first conversion it receives over IPC (it shuts down
   * when no frame is left); one hidden document keeps it running.
   */
  keepalive: string;
  /** Documents converted once at start, so that Writer, Calc and Impress are loaded before a job. */
  warmups: string[];
}

/** Creates `root` with a profile carrying Folio's settings, a HOME, a TMPDIR and the seed documents. */
export async function prepareSofficeDirs(root: string, opts: { seedDocs: boolean }): Promise<SofficeDirs> {
  const profile = path.join(root, "profile");
  const home = path.join(root, "home");
  const tmp = path.join(root, "tmp");
  const seeds = path.join(root, "seed");
  for (const dir of [path.join(profile, "user"), home, tmp, seeds]) await mkdir(dir, { recursive: true, mode: 0o700 });
  await writeFile(path.join(profile, "user", "registrymodifications.xcu"), registryModifications());
  if (opts.seedDocs) {
    for (const [name, text] of Object.entries(SEED_DOCS)) await writeFile(path.join(seeds, name), text);
  }
  return {
    root,
    profileUrl: pathToFileURL(profile).href,
    home,
    tmp,
    keepalive: path.join(seeds, "keepalive.fodt"),
    warmups: ["keepalive.fodt", "warmup-calc.fods", "warmup-impress.fodp"].map((n) => path.join(seeds, n)),
  };
}

/** A closed local port: every proxied fetch fails at once instead of reaching the network. */
const NO_NETWORK_PROXY = "http://127.0.0.1:9";

/**
 * What soffice's environment adds to the engines' allow-listed one (core/sandbox.ts engineEnv):
 * private HOME and TMPDIR (LibreOffice writes caches and temporary copies there), the headless VCL
 * backend, no display and no session bus, and proxies pointing at a closed port so that linked
 * content (images, OLE links, external data) can never be fetched even if a document asks for
 * it — defence in depth behind the profile settings and, in a sandbox, the absent network.
 */
export function sofficeEnv(dirs: Pick<SofficeDirs, "home" | "tmp">): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {
    HOME: dirs.home,
    TMPDIR: dirs.tmp,
    SAL_USE_VCLPLUGIN: "svp",
    DISPLAY: undefined,
    WAYLAND_DISPLAY: undefined,
    DBUS_SESSION_BUS_ADDRESS: "disabled:",
    no_proxy: "",
    NO_PROXY: "",
  };
  for (const key of ["http_proxy", "https_proxy", "ftp_proxy", "all_proxy"]) {
    env[key] = NO_NETWORK_PROXY;
    env[key.toUpperCase()] = NO_NETWORK_PROXY;
  }
  return env;
}
