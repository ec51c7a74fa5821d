-- Call history: one row per call. The whole (redacted) history entry is kept as
-- JSON; the columns beside it are what queries filter and aggregate on.
CREATE TABLE calls (
    call_id        TEXT    NOT NULL PRIMARY KEY,
    correlation_id TEXT    NOT NULL,
    tool           TEXT    NOT NULL,
    success        INTEGER NOT NULL,
    retried        INTEGER NOT NULL,
    duration_ms    INTEGER NOT NULL,
    started_at_ms  INTEGER NOT NULL,
    entry          TEXT    NOT NULL
);
CREATE INDEX calls_by_correlation ON calls (correlation_id);
CREATE INDEX calls_by_tool ON calls (tool);
CREATE INDEX calls_by_start ON calls (started_at_ms);

-- Plan runs and the checkpoint of each finished step.
CREATE TABLE runs (
    run_id        TEXT    NOT NULL PRIMARY KEY,
    plan          TEXT    NOT NULL,
    result        TEXT,
    updated_at_ms INTEGER NOT NULL
);
CREATE TABLE run_steps (
    run_id     TEXT    NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    step_index INTEGER NOT NULL,
    outcome    TEXT    NOT NULL,
    PRIMARY KEY (run_id, step_index)
);

-- One row, rewritten by health checks to prove the file takes writes.
CREATE TABLE health (
    id    INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
    at_ms INTEGER NOT NULL
);
