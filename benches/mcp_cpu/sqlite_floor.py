"""What SQLite itself spends to record one call, as Axon's history writer asks
it to: the `calls` table and indexes of migrations/sqlite, the writer's FIFO
trim trigger, one row per transaction (what `durability = "sync"` commits for
calls made one at a time), WAL and `synchronous = NORMAL`. Python's `sqlite3`
module runs the statements, so the figure carries a few microseconds of
Python; it is a floor for `benches/mcp_cpu/run.py`'s SQLite figure, not a
measure of Axon. Figures in docs/benchmarks.md ("MCP").

    python3 benches/mcp_cpu/sqlite_floor.py
"""

import os
import resource
import sqlite3
import tempfile
import time


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def per_row(keep: int | None, rows: int = 5000) -> float:
    """CPU microseconds per recorded row, trimming groups to `keep` (None: no trim)."""
    with tempfile.TemporaryDirectory(prefix="axon-sqlite-floor-") as folder:
        db = sqlite3.connect(os.path.join(folder, "axon.db"), isolation_level=None)
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = NORMAL")
        db.execute(
            "CREATE TABLE calls (call_id TEXT NOT NULL PRIMARY KEY, correlation_id TEXT NOT NULL, "
            "tool TEXT NOT NULL, success INTEGER NOT NULL, retried INTEGER NOT NULL, "
            "duration_ms INTEGER NOT NULL, started_at_ms INTEGER NOT NULL, entry TEXT NOT NULL)"
        )
        db.execute("CREATE INDEX calls_by_correlation ON calls (correlation_id)")
        db.execute("CREATE INDEX calls_by_start ON calls (started_at_ms)")
        if keep is not None:
            db.execute(
                "CREATE TEMP TRIGGER calls_fifo AFTER INSERT ON main.calls "
                "WHEN NEW.correlation_id <> NEW.call_id BEGIN "
                "DELETE FROM calls WHERE correlation_id = NEW.correlation_id AND rowid <= "
                "(SELECT rowid FROM calls WHERE correlation_id = NEW.correlation_id "
                f"ORDER BY rowid DESC LIMIT 1 OFFSET {keep}); END"
            )
        entry = "x" * 800  # about an `echo` call's history entry
        start = cpu()
        for i in range(rows):
            db.execute("BEGIN IMMEDIATE")
            db.execute(
                "INSERT OR REPLACE INTO calls VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (f"01J{i:020d}", "mcp-session", "echo", 1, 0, 1, int(time.time() * 1000) + i, entry),
            )
            db.execute("COMMIT")
        spent = cpu() - start
        db.close()
    return spent / rows * 1e6


if __name__ == "__main__":
    for keep in (None, 100, 1000):
        label = "no FIFO trim" if keep is None else f"max_per_correlation = {keep}"
        print(f"{label}: {per_row(keep):.1f} us of CPU per row")
