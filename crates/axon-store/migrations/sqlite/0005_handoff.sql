-- Runs another process may take up when the one running them stops: begun by
-- a server replica that hands its runs to the cluster (a run whose claim went
-- stale is resumed elsewhere), or queued (POST /v1/runs?queue=true) for
-- whichever replica has room.
ALTER TABLE runs ADD COLUMN handoff INTEGER NOT NULL DEFAULT 0;
CREATE INDEX runs_unfinished_handoff ON runs (updated_at_ms) WHERE result IS NULL AND handoff = 1;
