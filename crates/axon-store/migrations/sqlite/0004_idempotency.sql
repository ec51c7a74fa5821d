-- Idempotency keys (`Idempotency-Key` on POST /v1/tools/{name}/call): the
-- first request's fingerprint and, once it has answered, its call result.
-- A row without a result is a request still running.
CREATE TABLE idempotency (
    key           TEXT    NOT NULL PRIMARY KEY,
    fingerprint   TEXT    NOT NULL,
    result        TEXT,
    created_at_ms INTEGER NOT NULL
);
CREATE INDEX idempotency_by_creation ON idempotency (created_at_ms);
