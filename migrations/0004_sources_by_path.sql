-- `sources` keyed by its path alone: as a rowid table with a TEXT primary key it was two
-- B-trees (the rows and SQLite's automatic unique index on `path`), so every source written
-- was two inserts and every lookup by path two descents. WITHOUT ROWID stores each row once,
-- in path order. The projection is rebuilt, never migrated, so the table is simply recreated.

DROP TABLE sources;

CREATE TABLE sources (
    path TEXT NOT NULL PRIMARY KEY,
    kind TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    ctime_ns INTEGER NOT NULL,
    inode INTEGER NOT NULL,
    racy INTEGER NOT NULL,
    content_hash INTEGER,
    item_key INTEGER,
    error_code TEXT,
    error_message TEXT,
    projected_len INTEGER,
    entry_count INTEGER,
    prefix_hash INTEGER
) STRICT, WITHOUT ROWID;
CREATE INDEX sources_racy ON sources (racy) WHERE racy = 1;
CREATE INDEX sources_unreadable ON sources (kind) WHERE error_code IS NOT NULL;
