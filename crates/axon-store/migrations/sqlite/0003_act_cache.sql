-- browser_act's translated steps (axon_browser::act::cache): one row per
-- normalised step and page shape, the action as JSON; the oldest go first
-- beyond the cap.
CREATE TABLE act_cache (
    key           TEXT    NOT NULL PRIMARY KEY,
    entry         TEXT    NOT NULL,
    updated_at_ms INTEGER NOT NULL
);
CREATE INDEX act_cache_by_update ON act_cache (updated_at_ms);
