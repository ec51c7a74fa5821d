-- No query needs calls by tool alone: the per-tool figures read the whole
-- table whatever the index (a scan and a sort were faster than walking this
-- index, 175-187 ms against 219-235 ms on 100 k rows), and the recent
-- latencies read the newest rows by seq. The index cost every committed
-- batch one more page written at the tool's place (15-30 % of a one-row
-- insert's commit): docs/benchmarks.md.
DROP INDEX IF EXISTS calls_by_tool;
