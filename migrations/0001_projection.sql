-- The derived projection of a pm tracker (docs/index.md). Everything here is rebuildable from
-- the item files and history streams; `meta.projection_version` decides when to rebuild.
-- `pm_locale` is JavaScript's localeCompare, registered on every connection by pm-index.

CREATE TABLE meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
) STRICT;

-- One row per readable item file: typed columns for every filter and sort key, plus the light
-- metadata JSON from which pm_engine::summary::ItemSummary::from_parts rebuilds the summary.
CREATE TABLE items (
    item_key INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    format TEXT NOT NULL,
    id TEXT NOT NULL,
    title TEXT NOT NULL,
    type TEXT NOT NULL,
    status TEXT NOT NULL,
    status_class TEXT NOT NULL,
    terminal INTEGER NOT NULL,
    priority INTEGER NOT NULL,
    parent TEXT,
    assignee TEXT,
    sprint TEXT,
    release TEXT,
    created_at TEXT NOT NULL,
    created_ms INTEGER,
    updated_at TEXT NOT NULL,
    updated_ms INTEGER,
    deadline TEXT,
    deadline_ms INTEGER,
    closed_at TEXT,
    closed_ms INTEGER,
    blocked_by TEXT,
    risk TEXT,
    has_confidence INTEGER NOT NULL,
    has_estimate INTEGER NOT NULL,
    has_acceptance_criteria INTEGER NOT NULL,
    has_resolution INTEGER NOT NULL,
    has_reviewer INTEGER NOT NULL,
    has_body INTEGER NOT NULL,
    has_linked_command INTEGER NOT NULL,
    n_comments INTEGER NOT NULL,
    n_notes INTEGER NOT NULL,
    n_learnings INTEGER NOT NULL,
    n_files INTEGER NOT NULL,
    n_docs INTEGER NOT NULL,
    n_tests INTEGER NOT NULL,
    n_test_runs INTEGER NOT NULL,
    n_deps INTEGER NOT NULL,
    light_json TEXT NOT NULL
) STRICT;

CREATE INDEX items_default_order ON items (
    terminal, priority, updated_ms DESC, updated_at COLLATE pm_locale DESC,
    id COLLATE pm_locale, path
);
CREATE INDEX items_id ON items (id, terminal);
CREATE INDEX items_status ON items (status);
CREATE INDEX items_type ON items (type);
CREATE INDEX items_parent ON items (parent);
CREATE INDEX items_assignee ON items (assignee);

CREATE TABLE item_tags (
    item_key INTEGER NOT NULL,
    tag TEXT NOT NULL,
    PRIMARY KEY (item_key, tag)
) STRICT, WITHOUT ROWID;
CREATE INDEX item_tags_tag ON item_tags (tag, item_key);

-- Dependency edges in file order; the target index serves reverse lookups (blocks, children).
CREATE TABLE item_deps (
    item_key INTEGER NOT NULL,
    position INTEGER NOT NULL,
    target_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    PRIMARY KEY (item_key, position)
) STRICT, WITHOUT ROWID;
CREATE INDEX item_deps_target ON item_deps (target_id, kind, item_key);

-- Custom-field values: one row per scalar, or per element of an array value (compact JSON).
CREATE TABLE item_fields (
    item_key INTEGER NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (item_key, key, value)
) STRICT, WITHOUT ROWID;
CREATE INDEX item_fields_value ON item_fields (key, value, item_key);

CREATE TABLE item_files (
    item_key INTEGER NOT NULL,
    position INTEGER NOT NULL,
    path TEXT NOT NULL,
    scope TEXT NOT NULL,
    note TEXT,
    PRIMARY KEY (item_key, position)
) STRICT, WITHOUT ROWID;
CREATE INDEX item_files_path ON item_files (path, scope, item_key);

CREATE TABLE item_docs (
    item_key INTEGER NOT NULL,
    position INTEGER NOT NULL,
    path TEXT NOT NULL,
    scope TEXT NOT NULL,
    note TEXT,
    PRIMARY KEY (item_key, position)
) STRICT, WITHOUT ROWID;
CREATE INDEX item_docs_path ON item_docs (path, scope, item_key);

-- The parts of a document the light metadata leaves out: body and heavy collections.
CREATE TABLE item_content (
    item_key INTEGER PRIMARY KEY,
    body TEXT NOT NULL,
    heavy_json TEXT
) STRICT;

-- Contentless: the text lives in `items` and `item_content`; FTS5 keeps only its index.
CREATE VIRTUAL TABLE item_search USING fts5 (
    title, description, tags, body, annotations,
    tokenize = 'unicode61', content = '', contentless_delete = 1
);

-- One row per item file and history stream the projection was built from.
CREATE TABLE sources (
    path TEXT PRIMARY KEY,
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
) STRICT;
CREATE INDEX sources_racy ON sources (racy) WHERE racy = 1;
CREATE INDEX sources_unreadable ON sources (kind) WHERE error_code IS NOT NULL;

-- History events: one row per parsed entry of every stream, in stream order.
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
    entry_json TEXT NOT NULL,
    PRIMARY KEY (stream, position)
) STRICT, WITHOUT ROWID;
CREATE INDEX events_order ON events (ts, stream, position);
CREATE INDEX events_op_order ON events (op, ts, stream, position);
CREATE INDEX events_author_order ON events (author, ts, stream, position);
CREATE INDEX events_harness_order ON events (agent_harness, ts, stream, position);
