/**
 * The `folio` command: one front door for every process Folio runs. Wiring only; each
 * subcommand lives with the component it starts.
 */
import { ConfigError } from "../core/config.ts";
import { EXIT } from "../core/errors.ts";

const USAGE = `usage: folio <command> [args]

  run <operation> ...      run one operation on local files and print the result JSON
  runner --spec FILE|-     run one job spec (Kubernetes pods)
  runner --worker          long-lived runner worker over stdio (the embedded pool)
  serve                    the HTTPS API, embedded mode            (issue #3)
  keys | tenants | access-requests   admin commands              (issue #3)
  controller               the Kubernetes operator                 (issue #4)

Run "folio run --help" for the options of an operation.`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case "run":
      return (await import("../runner/main.ts")).runCommand(rest);
    case "runner":
      return (await import("../runner/main.ts")).runnerCommand(rest);
    case undefined:
    case "help":
    case "--help":
    case "-h":
      process.stdout.write(USAGE + "\n");
      return command === undefined ? EXIT.USAGE : EXIT.OK;
    default:
      process.stderr.write(`folio: unknown command "${command}"\n\n${USAGE}\n`);
      return EXIT.USAGE;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    if (err instanceof ConfigError) {
      process.stderr.write(`folio: ${err.message}\n`);
      process.exitCode = EXIT.USAGE;
      return;
    }
    process.stderr.write(`folio: internal error: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exitCode = EXIT.INTERNAL;
  },
);
