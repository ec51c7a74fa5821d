-- Axon's store on PostgreSQL: the same tables as SQLite's (migrations/sqlite),
-- shared by every server replica. Records are kept as JSON text beside the
-- columns queries filter on; `seq` orders calls as SQLite's rowid does.

-- Call history: one row per call.
CREATE TABLE calls (
    seq            BIGSERIAL PRIMARY KEY,
    call_id        TEXT    NOT NULL UNIQUE,
    correlation_id TEXT    NOT NULL,
    tool           TEXT    NOT NULL,
    success        BOOLEAN NOT NULL,
    retried        BOOLEAN NOT NULL,
    duration_ms    BIGINT  NOT NULL,
    started_at_ms  BIGINT  NOT NULL,
    entry          TEXT    NOT NULL
);
CREATE INDEX calls_by_correlation ON calls (correlation_id, seq);
CREATE INDEX calls_by_tool ON calls (tool);
CREATE INDEX calls_by_start ON calls (started_at_ms);

-- Plan runs and the checkpoint of each finished step. `handoff`: another
-- replica may take the run up when the one running it stops.
CREATE TABLE runs (
    run_id        TEXT    NOT NULL PRIMARY KEY,
    plan          TEXT    NOT NULL,
    result        TEXT,
    updated_at_ms BIGINT  NOT NULL,
    handoff       BOOLEAN NOT NULL DEFAULT FALSE
);
CREATE INDEX runs_by_update ON runs (updated_at_ms);
CREATE INDEX runs_unfinished_handoff ON runs (updated_at_ms) WHERE result IS NULL AND handoff;
CREATE TABLE run_steps (
    run_id     TEXT    NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    step_index BIGINT  NOT NULL,
    outcome    TEXT    NOT NULL,
    PRIMARY KEY (run_id, step_index)
);

-- The lease on a run being executed: its holder's host and pid, and a
-- heartbeat; a lease not beaten for a while (or whose process is gone from
-- this host) is taken over.
CREATE TABLE run_claims (
    run_id       TEXT    NOT NULL PRIMARY KEY,
    owner        TEXT    NOT NULL,
    host         TEXT    NOT NULL,
    pid          BIGINT  NOT NULL,
    heartbeat_ms BIGINT  NOT NULL
);

-- One row, rewritten by health checks to prove the database takes writes.
CREATE TABLE health (
    id    INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
    at_ms BIGINT  NOT NULL
);

-- browser_act's translated steps.
CREATE TABLE act_cache (
    key           TEXT   NOT NULL PRIMARY KEY,
    entry         TEXT   NOT NULL,
    updated_at_ms BIGINT NOT NULL
);
CREATE INDEX act_cache_by_update ON act_cache (updated_at_ms);

-- Idempotency keys: the first request's fingerprint and, once answered, its
-- result; a row without a result is a request still running.
CREATE TABLE idempotency (
    key           TEXT   NOT NULL PRIMARY KEY,
    fingerprint   TEXT   NOT NULL,
    result        TEXT,
    created_at_ms BIGINT NOT NULL
);
CREATE INDEX idempotency_by_creation ON idempotency (created_at_ms);
