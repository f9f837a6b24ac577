-- Graph reads from one item (`pm deps <id>`, `pm graph <traversal> <id>`) fetch only the items
-- reachable from it: a frontier's items by id (items_id), the items referring to it by parent
-- (items_parent), dependency target (item_deps_target) or scalar blocked_by (below), and the
-- dependency kinds in order of first use (item_deps_kind: one seek per distinct kind).
CREATE INDEX items_blocked_by ON items (blocked_by) WHERE blocked_by IS NOT NULL;
CREATE INDEX item_deps_kind ON item_deps (kind);

-- References with surrounding whitespace (Unicode White_Space, as Rust's str::trim) match an id
-- only after trimming, so no equality lookup finds them: these partial indexes list them, and
-- normally hold no row.
CREATE INDEX item_deps_untrimmed ON item_deps (item_key)
    WHERE target_id <> trim(target_id, char(9, 10, 11, 12, 13, 32, 133, 160, 5760, 8192, 8193,
        8194, 8195, 8196, 8197, 8198, 8199, 8200, 8201, 8202, 8232, 8233, 8239, 8287, 12288));
CREATE INDEX items_parent_untrimmed ON items (parent)
    WHERE parent <> trim(parent, char(9, 10, 11, 12, 13, 32, 133, 160, 5760, 8192, 8193,
        8194, 8195, 8196, 8197, 8198, 8199, 8200, 8201, 8202, 8232, 8233, 8239, 8287, 12288));
CREATE INDEX items_blocked_by_untrimmed ON items (blocked_by)
    WHERE blocked_by <> trim(blocked_by, char(9, 10, 11, 12, 13, 32, 133, 160, 5760, 8192, 8193,
        8194, 8195, 8196, 8197, 8198, 8199, 8200, 8201, 8202, 8232, 8233, 8239, 8287, 12288));
