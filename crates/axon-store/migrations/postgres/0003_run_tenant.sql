-- The tenant a run belongs to (a scoped token of `axon serve`; NULL: the
-- process's owner). Another tenant neither lists nor reads it, and a queued
-- run is taken up as its tenant (docs/security.md).
ALTER TABLE runs ADD COLUMN tenant TEXT;
