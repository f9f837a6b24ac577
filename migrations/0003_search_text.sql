-- The searchable text of every item (pm_engine::rank::search::SearchText): the normalised id
-- and the lowercased text of the twelve document fields pm's keyword search scores, so `pm
-- search` scores from one sequential table scan instead of parsing documents.
--
-- `text` is one blob (index/src/search.rs, `encode`): thirteen little-endian u32 byte lengths
-- (id, then the fields in `FIELD_NAMES` order) followed by the UTF-8 texts back to back. One
-- column instead of thirteen keeps the scan's per-row cost to a single column read.

CREATE TABLE item_text (
    item_key INTEGER PRIMARY KEY,
    text BLOB NOT NULL
) STRICT;
