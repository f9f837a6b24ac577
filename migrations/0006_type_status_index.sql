-- `stats`, `aggregate` and list counts group items by (type, status). A covering index answers
-- them from a few pages instead of the item rows, whose light JSON makes `items` the largest
-- table. It also serves the type filter, as the single-column index it replaces did.

DROP INDEX items_type;
CREATE INDEX items_type_status ON items (type, status);
