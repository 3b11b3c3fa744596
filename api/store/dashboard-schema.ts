/**
 * The dashboard's tables in the embedded SQLite file: people (users), one-time invites, the audit
 * log, daily usage aggregates, webhook attempts and API key labels. They have their own version
 * counter (table dashboard_schema) so that they migrate apart from the API's tables in db.ts.
 */
import { transaction, type Db } from "./db.ts";

const MIGRATIONS: string[] = [
  `CREATE TABLE users (
     id TEXT PRIMARY KEY,
     email TEXT NOT NULL,
     tenant_id TEXT,                   -- null for operators
     role TEXT NOT NULL,               -- owner | developer | viewer | operator
     password_hash TEXT,               -- scrypt$…; null until the invite is accepted (or OIDC-only)
     totp_secret TEXT,                 -- base32, null when TOTP is off
     totp_last_step INTEGER,           -- the last accepted time step: a code is never accepted twice
     session_epoch INTEGER NOT NULL DEFAULT 0,
     revoked_sessions TEXT NOT NULL DEFAULT '[]',  -- JSON [{sid, until}] signed out one by one
     failed_logins INTEGER NOT NULL DEFAULT 0,
     locked_until INTEGER,
     oidc_subject TEXT,
     created_at INTEGER NOT NULL,
     last_login_at INTEGER,
     disabled_at INTEGER
   );
   CREATE UNIQUE INDEX users_email_tenant ON users(email, IFNULL(tenant_id, ''));
   CREATE TABLE invites (
     token_hash TEXT PRIMARY KEY,      -- SHA-256 of the token in the link; the token is never stored
     user_id TEXT NOT NULL,
     created_at INTEGER NOT NULL,
     expires_at INTEGER NOT NULL,
     used_at INTEGER
   );
   CREATE TABLE audit_log (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     tenant_id TEXT,                   -- null: an operator action on the installation
     actor TEXT NOT NULL,              -- e-mail of the person, or "cli"
     action TEXT NOT NULL,
     target TEXT,
     detail TEXT NOT NULL DEFAULT '{}',
     address TEXT,
     at INTEGER NOT NULL
   );
   CREATE INDEX audit_tenant ON audit_log(tenant_id, at DESC);
   CREATE TABLE usage_daily (
     tenant_id TEXT NOT NULL,
     day TEXT NOT NULL,                -- YYYY-MM-DD (UTC)
     operation TEXT NOT NULL,
     outcome TEXT NOT NULL,            -- succeeded | failed | canceled
     jobs INTEGER NOT NULL,
     pages INTEGER NOT NULL,
     bytes_in INTEGER NOT NULL,
     bytes_out INTEGER NOT NULL,
     durations TEXT NOT NULL,          -- JSON histogram counts over DURATION_BUCKETS_MS
     PRIMARY KEY (tenant_id, day, operation, outcome)
   );
   CREATE TABLE usage_counted (job_id TEXT PRIMARY KEY, at INTEGER NOT NULL);
   CREATE TABLE webhook_attempts (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     delivery_id TEXT NOT NULL,
     job_id TEXT NOT NULL,
     tenant_id TEXT NOT NULL,
     at INTEGER NOT NULL,
     status_code INTEGER,
     latency_ms INTEGER,
     error TEXT,
     next_attempt_at INTEGER
   );
   CREATE INDEX webhook_attempts_job ON webhook_attempts(job_id, at);
   CREATE TABLE key_labels (
     key_id TEXT PRIMARY KEY,
     tenant_id TEXT NOT NULL,
     name TEXT NOT NULL,
     created_by TEXT NOT NULL,
     replaces TEXT                     -- the key this one rotated
   );`,
];

/** Brings the dashboard's tables up to date (idempotent; called at open by every store). */
export function migrateDashboard(db: Db): void {
  db.exec("CREATE TABLE IF NOT EXISTS dashboard_schema (version INTEGER NOT NULL)");
  const row = db.prepare("SELECT version FROM dashboard_schema").get() as { version: number } | undefined;
  let version = row?.version ?? 0;
  if (!row) db.prepare("INSERT INTO dashboard_schema (version) VALUES (0)").run();
  for (; version < MIGRATIONS.length; version++) {
    transaction(db, () => {
      db.exec(MIGRATIONS[version]!);
      db.prepare("UPDATE dashboard_schema SET version = ?").run(version + 1);
    });
  }
}
