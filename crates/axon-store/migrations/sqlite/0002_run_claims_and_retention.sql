-- Who runs a run now: one row per run id being executed, with the holder's
-- host and pid (a holder that died on this host is taken over at once) and a
-- heartbeat (a holder elsewhere that stopped beating is taken over after a while).
CREATE TABLE run_claims (
    run_id       TEXT    NOT NULL PRIMARY KEY,
    owner        TEXT    NOT NULL,
    host         TEXT    NOT NULL,
    pid          INTEGER NOT NULL,
    heartbeat_ms INTEGER NOT NULL
);

-- Runs are pruned by age and count, oldest first.
CREATE INDEX runs_by_update ON runs (updated_at_ms);
