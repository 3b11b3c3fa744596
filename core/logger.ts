/**
 * Structured logging with pino. Secrets never reach a log line: the redaction list covers every
 * field name that can carry a password, key or webhook secret, at any depth we log objects with.
 */
import { pino, type Logger, type LoggerOptions } from "pino";

export type { Logger } from "pino";

const SECRET_FIELDS = [
  "user_password",
  "owner_password",
  "password",
  "authorization",
  "api_key",
  "key",
  "secret",
  "webhook_secret",
  "token",
];

/** pino redact paths for the secret fields at the top level and up to three levels down. */
export const REDACT_PATHS: string[] = SECRET_FIELDS.flatMap((f) => [
  f,
  `*.${f}`,
  `*.*.${f}`,
  `*.*.*.${f}`,
  `headers["${f}"]`,
  `req.headers["${f}"]`,
]);

export interface LoggerConfig {
  level: string;
  pretty?: boolean;
  /** Where log lines go; defaults to stderr so that stdout stays free for results. */
  destination?: NodeJS.WritableStream;
}

export function createLogger(cfg: LoggerConfig, bindings: Record<string, unknown> = {}): Logger {
  const options: LoggerOptions = {
    level: cfg.level,
    redact: { paths: REDACT_PATHS, censor: "[redacted]" },
    base: { pid: process.pid, ...bindings },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  };
  return pino(options, (cfg.destination ?? pino.destination(2)) as pino.DestinationStream);
}
