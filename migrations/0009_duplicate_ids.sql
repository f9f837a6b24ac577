-- Ids held by more than one item file (the same id in two type folders, or as `.md` and
-- `.toon`). Reads answer each id once, from the first file, so while this table holds a row
-- the item reads answer from a scan; it normally holds none, which costs a read one lookup.
-- Kept by pm-index: filled after a build, and refreshed for the ids an upkeep touches.
CREATE TABLE duplicate_ids (
    id TEXT PRIMARY KEY
) STRICT, WITHOUT ROWID;
