/**
 * The embedded store: one SQLite file (node:sqlite) in the data directory, in WAL mode so that
 * reads never wait for the writer. Migrations are numbered and run once, in order, at open.
 */
import { mkdirSync } from "node:fs";
import path from "node:path";
import { DatabaseSync, type StatementSync } from "node:sqlite";

const MIGRATIONS: string[] = [
  `CREATE TABLE tenants (
     id TEXT PRIMARY KEY,
     name TEXT NOT NULL UNIQUE,
     plan TEXT NOT NULL,
     webhook_secret TEXT NOT NULL,
     webhook_secret_prev TEXT,
     webhook_secret_prev_until INTEGER,
     created_at INTEGER NOT NULL
   );
   CREATE TABLE api_keys (
     key_id TEXT PRIMARY KEY,
     tenant_id TEXT NOT NULL REFERENCES tenants(id),
     secret_hash BLOB NOT NULL,
     created_at INTEGER NOT NULL,
     expires_at INTEGER,
     revoked_at INTEGER,
     last_used_at INTEGER
   );
   CREATE TABLE files (
     id TEXT PRIMARY KEY,
     tenant_id TEXT NOT NULL,
     role TEXT NOT NULL,               -- upload | output
     job_id TEXT,
     filename TEXT NOT NULL,
     content_type TEXT NOT NULL,
     size INTEGER NOT NULL,
     sha256 TEXT NOT NULL,
     pages INTEGER,
     storage_key TEXT NOT NULL,
     created_at INTEGER NOT NULL,
     expires_at INTEGER
   );
   CREATE INDEX files_expiry ON files(expires_at);
   CREATE INDEX files_job ON files(job_id);
   CREATE TABLE jobs (
     id TEXT PRIMARY KEY,
     tenant_id TEXT NOT NULL,
     operation TEXT NOT NULL,
     status TEXT NOT NULL,
     created_at INTEGER NOT NULL,
     started_at INTEGER,
     completed_at INTEGER,
     expires_at INTEGER,
     inputs TEXT NOT NULL,             -- JSON: [{file_id, filename, content_type, size, sha256, pages, storage_key, page_spec}]
     options TEXT NOT NULL,            -- JSON, secrets removed
     output_filename TEXT,
     result TEXT,                      -- JSON
     error TEXT,                       -- JSON {code, message}
     webhook_url TEXT,
     metadata TEXT NOT NULL,           -- JSON
     attempts INTEGER NOT NULL DEFAULT 0,
     retention_ms INTEGER NOT NULL
   );
   CREATE INDEX jobs_tenant ON jobs(tenant_id, created_at DESC, id DESC);
   CREATE INDEX jobs_status ON jobs(status, created_at);
   CREATE INDEX jobs_expiry ON jobs(expires_at);
   -- Protect passwords, sealed with the data directory's key, deleted when the job ends.
   CREATE TABLE job_secrets (job_id TEXT PRIMARY KEY, sealed BLOB NOT NULL);
   CREATE TABLE idempotency (
     tenant_id TEXT NOT NULL,
     key TEXT NOT NULL,
     request_hash TEXT NOT NULL,
     job_id TEXT NOT NULL,
     created_at INTEGER NOT NULL,
     PRIMARY KEY (tenant_id, key)
   );
   CREATE TABLE webhook_deliveries (
     id TEXT PRIMARY KEY,              -- the webhook-id header, the same on every retry
     job_id TEXT NOT NULL,
     tenant_id TEXT NOT NULL,
     url TEXT NOT NULL,
     event_type TEXT NOT NULL,
     payload TEXT NOT NULL,
     status TEXT NOT NULL,             -- pending | delivered | failing | gave_up
     attempts INTEGER NOT NULL DEFAULT 0,
     next_attempt_at INTEGER,
     last_attempt_at INTEGER,
     last_error TEXT,
     created_at INTEGER NOT NULL
   );
   CREATE INDEX deliveries_due ON webhook_deliveries(status, next_attempt_at);
   CREATE INDEX deliveries_job ON webhook_deliveries(job_id);
   CREATE TABLE access_requests (
     id TEXT PRIMARY KEY,
     email TEXT NOT NULL,
     company TEXT NOT NULL,
     use_case TEXT NOT NULL,
     description TEXT NOT NULL,
     expected_monthly_volume INTEGER NOT NULL,
     file_types TEXT NOT NULL,
     needs_dpa INTEGER NOT NULL,
     status TEXT NOT NULL,             -- pending | approved | rejected
     created_at INTEGER NOT NULL,
     decided_at INTEGER,
     tenant_id TEXT
   );`,
  // A suspended tenant's keys answer 403 tenant_suspended (issue #12).
  `ALTER TABLE tenants ADD COLUMN suspended INTEGER NOT NULL DEFAULT 0;`,
];

export type Db = DatabaseSync;

/** Opens (creating if needed) the database in `dataDir` and brings its schema up to date. */
export function openDb(dataDir: string): Db {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const db = new DatabaseSync(path.join(dataDir, "folio.db"));
  db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000;");
  const version = (db.prepare("PRAGMA user_version").get() as { user_version: number }).user_version;
  for (let v = version; v < MIGRATIONS.length; v++) {
    transaction(db, () => {
      db.exec(MIGRATIONS[v]!);
      db.exec(`PRAGMA user_version = ${v + 1}`);
    });
  }
  return db;
}

/** Runs fn in a transaction (BEGIN IMMEDIATE: the writer lock is taken up front). */
export function transaction<T>(db: Db, fn: () => T): T {
  db.exec("BEGIN IMMEDIATE");
  try {
    const out = fn();
    db.exec("COMMIT");
    return out;
  } catch (err) {
    db.exec("ROLLBACK");
    throw err;
  }
}

const cache = new WeakMap<Db, Map<string, StatementSync>>();

/**
 * A prepared statement for `sql`, compiled once per database and reused: compiling SQL costs
 * more than running these small queries, and the hot paths (auth, GET job) run a few each.
 */
export function sql(db: Db, text: string): StatementSync {
  let byText = cache.get(db);
  if (!byText) {
    byText = new Map<string, StatementSync>();
    cache.set(db, byText);
  }
  let stmt = byText.get(text);
  if (!stmt) byText.set(text, (stmt = db.prepare(text)));
  return stmt;
}
