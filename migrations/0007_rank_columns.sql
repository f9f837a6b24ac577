-- The three facts of the light metadata that `pm next` and `pm context` rank by, stored as typed
-- columns so the ranking rows never read `light_json` (about 780 bytes a row, most of the
-- table): `rank_order` is its numeric `order` (pm_engine::rank::item::light_order),
-- `has_schedule` whether it has a `reminders` or `events` array (light_has_schedule), and
-- `light_len` the byte length of exactly the text stored in `light_json`. The projection is
-- rebuilt, never migrated, so the defaults are never read.

ALTER TABLE items ADD COLUMN rank_order REAL;
ALTER TABLE items ADD COLUMN has_schedule INTEGER NOT NULL DEFAULT 0;
ALTER TABLE items ADD COLUMN light_len INTEGER NOT NULL DEFAULT 0;

-- The default list order, widened to cover every column the ranking rows read: one scan of this
-- index (about a sixth of the table's size) yields the rows of `rank_items` already in default
-- order, and a filtered list in default order tests the status, type, parent and assignee
-- filters on its entries instead of looking up each table row. Its key columns are unchanged.
DROP INDEX items_default_order;
CREATE INDEX items_default_order ON items (
    terminal, priority, updated_ms DESC, updated_at COLLATE pm_locale DESC,
    id COLLATE pm_locale, path,
    title, type, status, parent, assignee, deadline, deadline_ms, risk, blocked_by,
    n_comments, n_notes, n_learnings, rank_order, has_schedule, light_len
);

-- The blocking edges the ranking rows attach (`pm_engine::rank::item::BLOCKING_KINDS`): a few
-- of all edges, found without scanning every dependency row. The condition is written exactly as
-- `index/src/rank.rs` queries it, so the planner can use the index.
CREATE INDEX item_deps_blocking ON item_deps (item_key, position, target_id, kind)
    WHERE kind IN ('blocks', 'blocked_by');
