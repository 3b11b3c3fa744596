/**
 * Entry points of the runner: wiring only.
 *   folio run <operation> …        one operation on local files (runner/cli.ts)
 *   folio runner --spec FILE|-     one job spec from a file or stdin
 *   folio runner --pod             one Kubernetes runner pod: the spec from FOLIO_RUNNER_SPEC, files
 *                                  in S3, the report in the termination message (runner/pod.ts)
 *   folio runner --worker          long-lived worker: NDJSON specs on stdin, results on stdout,
 *                                  keeping its LibreOffice instances warm (the embedded pool)
 */
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { jsonLine } from "../core/json-line.ts";
import { loadConfig, type Config } from "../core/config.ts";
import { EXIT, toJobError } from "../core/errors.ts";
import { createLogger, type Logger } from "../core/logger.ts";
import { guardSandbox } from "../core/sandbox.ts";
import { parseRunArgs, reportFailure, RUN_USAGE, UsageError } from "./cli.ts";
import { createBrowsers } from "./engines/browsers.ts";
import type { SofficeProvider } from "./engines/soffice-job.ts";
import type { PodStorage, PresignedAccess } from "./pod-storage.ts";
import { runSpec } from "./run.ts";

/**
 * A cold (one-shot) LibreOffice provider whose modules load on first use: a `folio run merge`
 * or a pod running split never pays for loading the office machinery.
 */
function lazyColdSoffice(config: Config, log: Logger): SofficeProvider {
  let real: Promise<SofficeProvider> | null = null;
  const get = (): Promise<SofficeProvider> => (real ??= import("./engines/libreoffice.ts").then((m) => m.createSoffice(config, log, 0)));
  return {
    engine: "cold",
    toPdf: async (input, opts) => (await get()).toPdf(input, opts),
    close: async () => {
      if (real) await (await real).close();
    },
  };
}

const print = (line: string): void => {
  process.stdout.write(line + "\n");
};

/** Configuration and logger; refuses to go on when the engines' sandbox cannot work (core/sandbox.ts). */
function setup(level?: string): { config: Config; log: Logger } {
  const config = loadConfig();
  const log = createLogger({ level: level ?? config.FOLIO_LOG_LEVEL, pretty: config.FOLIO_PRETTY_LOGS }, { component: "runner" });
  guardSandbox(config, log);
  return { config, log };
}

/** `folio run …` */
export async function runCommand(argv: readonly string[]): Promise<number> {
  if (argv.length === 0 || argv[0] === "--help" || argv[0] === "-h") {
    process.stderr.write(RUN_USAGE + "\n");
    return argv.length === 0 ? EXIT.USAGE : EXIT.OK;
  }
  let args;
  try {
    args = parseRunArgs(argv);
  } catch (err) {
    if (err instanceof UsageError) process.stderr.write(RUN_USAGE + "\n");
    return reportFailure(err, print);
  }
  // A one-shot run logs warnings only: its stdout is the result, its stderr stays quiet.
  const { config, log } = setup(process.env.FOLIO_LOG_LEVEL ? undefined : "warn");
  const soffice = lazyColdSoffice(config, log);
  try {
    const spec = {
      operation: args.operation,
      options: args.options,
      inputs: args.inputs,
      output_dir: args.outDir,
      ...(args.outputFilename ? { output_filename: args.outputFilename } : {}),
    };
    print(JSON.stringify(await runSpec(spec, { config, log, soffice })));
    return EXIT.OK;
  } catch (err) {
    return reportFailure(err, print);
  } finally {
    await soffice.close();
  }
}

async function workerLoop(config: Config, log: Logger): Promise<number> {
  const { createSoffice } = await import("./engines/libreoffice.ts");
  const soffice = createSoffice(config, log, Math.max(1, config.FOLIO_SOFFICE_POOL_SIZE));
  const browsers = createBrowsers(config, log, true);
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  try {
    for await (const line of lines) {
      if (!line.trim()) continue;
      let msg: { id?: unknown; spec?: unknown };
      try {
        msg = JSON.parse(line) as typeof msg;
      } catch {
        process.stdout.write(jsonLine({ id: null, error: { code: "validation_failed", message: "not JSON" } }));
        continue;
      }
      try {
        // jsonLine: an output filename may hold U+2028/U+2029, which the API's line reader splits on.
        process.stdout.write(jsonLine({ id: msg.id, result: await runSpec(msg.spec, { config, log, soffice, browsers }) }));
      } catch (err) {
        process.stdout.write(jsonLine({ id: msg.id, error: toJobError(err).toJSON() }));
      }
    }
  } finally {
    await Promise.all([soffice.close(), browsers.close()]);
  }
  return EXIT.OK;
}

/** `folio runner --pod`: see runner/pod.ts. */
async function podCommand(config: Config, log: Logger): Promise<number> {
  const { POD_ENV_NAMES, runPod, writeTerminationMessage } = await import("./pod.ts");
  const { presignedStorage, storeStorage, RUNNER_ACCESS_ENV } = await import("./pod-storage.ts");
  // The pod contract's variables are read here, once; the secret ones (passwords, presigned URLs)
  // are then removed from the process environment — engines get an allow-listed one anyway
  // (core/sandbox.ts), this is defence in depth.
  const env: Record<string, string | undefined> = {};
  for (const name of POD_ENV_NAMES) {
    env[name] = process.env[name];
    if (name.startsWith("FOLIO_OPTION_") || name === RUNNER_ACCESS_ENV) delete process.env[name];
  }
  const soffice = lazyColdSoffice(config, log);
  const { S3ObjectStore } = await import("../core/storage/s3-store.ts");
  // Presigned URLs for exactly this job's objects when the controller gave them (its runner pods
  // get no credentials: controller/runner-access.ts); else the bucket, with the SDK's credentials.
  const access = env[RUNNER_ACCESS_ENV];
  let store: PodStorage | undefined;
  try {
    const outcome = await runPod(env, {
      config,
      log,
      soffice,
      store: () =>
        (store ??= access ? presignedStorage(JSON.parse(access) as PresignedAccess) : storeStorage(S3ObjectStore.fromConfig(config))),
    });
    try {
      await writeTerminationMessage(env, outcome.message);
    } catch (err) {
      log.error({ cause: err instanceof Error ? err.message : String(err) }, "Could not write the termination message");
    }
    print(outcome.message);
    return outcome.exitCode;
  } finally {
    store?.close();
    await soffice.close();
  }
}

/** `folio runner --spec FILE|-`, `folio runner --pod` or `folio runner --worker` */
export async function runnerCommand(argv: readonly string[]): Promise<number> {
  const { config, log } = setup();
  if (argv[0] === "--worker") return workerLoop(config, log);
  if (argv[0] === "--pod") return podCommand(config, log);
  if (argv[0] !== "--spec" || argv[1] === undefined) {
    process.stderr.write("usage: folio runner --spec FILE|-   or   folio runner --pod   or   folio runner --worker\n");
    return EXIT.USAGE;
  }
  const soffice = lazyColdSoffice(config, log);
  try {
    const text = readFileSync(argv[1] === "-" ? 0 : argv[1], "utf8");
    print(JSON.stringify(await runSpec(JSON.parse(text) as unknown, { config, log, soffice })));
    return EXIT.OK;
  } catch (err) {
    return reportFailure(err instanceof SyntaxError ? new UsageError("the spec is not valid JSON") : err, print);
  } finally {
    await soffice.close();
  }
}
