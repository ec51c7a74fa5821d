-- The owner of a call (issue 59): '' for the process's owner, else the
-- tenant it was made as. A named group is trimmed per owner, so that one
-- tenant's calls under a correlation id never push another's out
-- (docs/security.md, "Who owns what"). The index serves both the reads by
-- correlation id (its prefix) and the trim of one owner's group.
ALTER TABLE calls ADD COLUMN owner TEXT NOT NULL DEFAULT '';
DROP INDEX IF EXISTS calls_by_correlation;
CREATE INDEX calls_by_correlation ON calls (correlation_id, owner);
