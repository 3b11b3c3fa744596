/**
 * The `folio` command: one front door for every process Folio runs. Wiring only; each
 * subcommand lives with the component it starts.
 */
import { ConfigError } from "../core/config.ts";
import { EXIT } from "../core/errors.ts";

const USAGE = `usage: folio <command> [args]

  run <operation> ...      run one operation on local files and print the result JSON
  runner --spec FILE|-     run one job spec
  runner --pod             run the job of a Kubernetes runner pod (FOLIO_RUNNER_SPEC, S3)
  runner --worker          long-lived runner worker over stdio (the embedded pool)
  serve [--port N] [--data-dir DIR]   the HTTPS API, embedded mode
  tenants create NAME --plan business|free | list | set-plan | show-secret | rotate-secret
  keys create|list --tenant NAME | revoke KEY_ID | rotate KEY_ID
  access-requests list | approve ID | reject ID
  users invite --tenant NAME --email E [--role R] | invite --operator --email E | list
                           admin commands on the data directory (--data-dir DIR, --json)
  controller               the PdfJob operator (Kubernetes mode; environment in controller/main.ts)

Run "folio run --help" for the options of an operation.`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case "run":
      return (await import("../runner/main.ts")).runCommand(rest);
    case "runner":
      return (await import("../runner/main.ts")).runnerCommand(rest);
    case "serve":
    case "keys":
    case "tenants":
    case "access-requests":
    case "users":
      return (await import("../api/main.ts")).apiCommand(command, rest);
    case "controller":
      return (await import("../controller/main.ts")).controllerCommand(rest);
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
