-- Calls parked for a person's approval (axon_core::approval): the record as
-- JSON, its status beside it for the queries, and the tenant whose call it is.
CREATE TABLE approvals (
    id            TEXT    NOT NULL PRIMARY KEY,
    status        TEXT    NOT NULL,
    tenant        TEXT,
    entry         TEXT    NOT NULL,
    created_at_ms INTEGER NOT NULL
);
CREATE INDEX approvals_by_status ON approvals (status, created_at_ms);
