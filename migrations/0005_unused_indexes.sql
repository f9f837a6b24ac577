-- Indexes no query reads: tag and custom-field filters are correlated EXISTS lookups by item,
-- answered by the primary keys (item_key, tag) and (item_key, key, value) as well as by these
-- value-first indexes, and nothing looks up linked files or docs by path. Each one was a sort of
-- all its rows in every full build and a B-tree insert per row in every apply.

DROP INDEX item_tags_tag;
DROP INDEX item_fields_value;
DROP INDEX item_files_path;
DROP INDEX item_docs_path;
