-- Events point at their line in the stream file instead of copying it: the stream is the truth,
-- and creation lines carry whole items (a copy made `events` most of the database). A reader
-- fetches the lines of the page it answers. The projection is rebuilt, never migrated, so the
-- table is simply recreated.

DROP TABLE events;

CREATE TABLE events (
    stream TEXT NOT NULL,
    position INTEGER NOT NULL,
    ts TEXT NOT NULL,
    author TEXT NOT NULL,
    op TEXT NOT NULL,
    agent_harness TEXT,
    agent_instance TEXT,
    message TEXT,
    patch_count INTEGER NOT NULL,
    line_offset INTEGER NOT NULL,
    line_len INTEGER NOT NULL,
    PRIMARY KEY (stream, position)
) STRICT, WITHOUT ROWID;
CREATE INDEX events_order ON events (ts, stream, position);
CREATE INDEX events_op_order ON events (op, ts, stream, position);
CREATE INDEX events_author_order ON events (author, ts, stream, position);
CREATE INDEX events_harness_order ON events (agent_harness, ts, stream, position);
