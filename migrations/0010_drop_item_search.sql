-- The full-text table no read used: `pm search` scores items from `item_text` with pm's own
-- tokenizer and weights, which FTS5's bm25 cannot reproduce, and filling the FTS index was a
-- sixth of the single writer thread's time in a full build.

DROP TABLE item_search;
