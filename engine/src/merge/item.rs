//! The field-aware three-way merge of two item documents against their common ancestor.
//! Pure: documents in, a merged document and what was decided out. The caller canonicalizes
//! and serializes the result, and records the decisions (see `receipt.rs`).
//!
//! Rules, per metadata key: a scalar changed on one side takes that side; changed to the same
//! value on both takes it; changed differently on both is a conflict the preferred side wins
//! (`updated_at` takes the later instant instead: both sides always touch it). Collections
//! (tags, dependencies, linked files/docs/tests, comments/notes/learnings, reminders, events,
//! test runs) are sets: every entry either side added, minus every entry either side removed,
//! by identity. The body is merged line by line (`text.rs`).

use super::text::{self, TextMerge};
use crate::item::ItemDoc;
use crate::timestamp::compare_timestamp_strings;
use serde_json::{Map, Value};
use std::cmp::Ordering;

/// The side that wins a conflict (`--prefer`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// The current branch (git's `%A`).
    #[default]
    Ours,
    /// The branch being merged in (git's `%B`).
    Theirs,
}

impl Side {
    /// Returns the spelling (`ours`, `theirs`).
    pub fn as_str(self) -> &'static str {
        match self {
            Side::Ours => "ours",
            Side::Theirs => "theirs",
        }
    }

    /// Returns the side a `--prefer` value names.
    pub fn parse(raw: &str) -> Option<Side> {
        match raw {
            "ours" => Some(Side::Ours),
            "theirs" => Some(Side::Theirs),
            _ => None,
        }
    }
}

/// A scalar both sides changed differently: what each side held and which value was kept.
/// `None` is an absent key.
#[derive(Clone, Debug, PartialEq)]
pub struct Decision {
    /// The metadata key.
    pub field: String,
    /// The ancestor's value.
    pub base: Option<Value>,
    /// Our value.
    pub ours: Option<Value>,
    /// Their value.
    pub theirs: Option<Value>,
    /// The side whose value the merged document holds.
    pub winner: Side,
}

impl Decision {
    /// Returns the value the merged document holds.
    pub fn retained(&self) -> Option<&Value> {
        match self.winner {
            Side::Ours => self.ours.as_ref(),
            Side::Theirs => self.theirs.as_ref(),
        }
    }

    /// Returns the value the merge dropped.
    pub fn discarded(&self) -> Option<&Value> {
        match self.winner {
            Side::Ours => self.theirs.as_ref(),
            Side::Theirs => self.ours.as_ref(),
        }
    }
}

/// The merged document and an account of it.
#[derive(Clone, Debug, PartialEq)]
pub struct ItemMerge {
    /// The merged document (not yet canonicalized).
    pub doc: ItemDoc,
    /// Keys (and `body`) whose merged value came from their side alone.
    pub fields_from_theirs: Vec<String>,
    /// Collections both sides changed, merged as a union.
    pub union_fields: Vec<String>,
    /// Scalars both sides changed differently.
    pub decisions: Vec<Decision>,
    /// Whether the body kept conflict markers (both sides changed the same lines).
    pub body_conflict: bool,
}

impl ItemMerge {
    /// Returns the fields git should stop on: every decided scalar, then `body` when its lines
    /// conflicted.
    pub fn conflicts(&self) -> Vec<String> {
        let mut out: Vec<String> = self.decisions.iter().map(|d| d.field.clone()).collect();
        if self.body_conflict {
            out.push("body".into());
        }
        out
    }

    /// Returns whether the merge needs review (a decided scalar or a body conflict).
    pub fn is_conflicted(&self) -> bool {
        !self.decisions.is_empty() || self.body_conflict
    }
}

/// How one metadata key merges.
enum Rule {
    /// Whole-value three-way merge.
    Scalar,
    /// The later ISO instant wins when both sides changed it.
    LaterInstant,
    /// A set of entries with this identity.
    Set(fn(&Value) -> String),
}

fn rule(key: &str) -> Rule {
    match key {
        "updated_at" => Rule::LaterInstant,
        "tags" | "reminders" | "events" => Rule::Set(whole),
        "dependencies" => Rule::Set(|v| identity(v, &["id", "kind"])),
        "files" | "docs" => Rule::Set(|v| identity(v, &["path", "scope"])),
        "tests" => Rule::Set(|v| identity(v, &["command", "path", "scope"])),
        "test_runs" => Rule::Set(|v| identity(v, &["run_id"])),
        "comments" | "notes" | "learnings" => {
            Rule::Set(|v| identity(v, &["created_at", "author", "text"]))
        }
        _ => Rule::Scalar,
    }
}

fn whole(value: &Value) -> String {
    crate::json::to_compact(value)
}

fn identity(value: &Value, keys: &[&str]) -> String {
    let parts: Vec<Value> = keys
        .iter()
        .map(|k| value.get(*k).cloned().unwrap_or(Value::Null))
        .collect();
    crate::json::to_compact(&Value::Array(parts))
}

/// Merges `ours` and `theirs` against `base` (the empty document when the file is new on
/// both sides); conflicts go to `prefer`.
pub fn merge_items(base: &ItemDoc, ours: &ItemDoc, theirs: &ItemDoc, prefer: Side) -> ItemMerge {
    let mut merge = ItemMerge {
        doc: ItemDoc::empty(),
        fields_from_theirs: Vec::new(),
        union_fields: Vec::new(),
        decisions: Vec::new(),
        body_conflict: false,
    };
    let mut metadata = Map::new();
    for key in keys_of(base, ours, theirs) {
        let b = base.metadata.get(&key);
        let o = ours.metadata.get(&key);
        let t = theirs.metadata.get(&key);
        let merged = match rule(&key) {
            Rule::Set(id) if [b, o, t].iter().all(|v| v.is_none_or(Value::is_array)) => {
                let merged = merge_set(b, o, t, prefer, id);
                if merged.as_ref() != o {
                    if merged.as_ref() == t {
                        merge.fields_from_theirs.push(key.clone());
                    } else {
                        merge.union_fields.push(key.clone());
                    }
                }
                merged
            }
            Rule::LaterInstant => later_instant(b, o, t),
            _ => merge_scalar(&key, b, o, t, prefer, &mut merge),
        };
        if let Some(value) = merged {
            metadata.insert(key, value);
        }
    }
    let body = match text::merge_lines(&base.body, &ours.body, &theirs.body) {
        TextMerge::Clean(body) => body,
        TextMerge::Conflicted(body) => {
            merge.body_conflict = true;
            body
        }
    };
    if body != ours.body && body == theirs.body {
        merge.fields_from_theirs.push("body".into());
    }
    merge.doc = ItemDoc { metadata, body };
    merge
}

/// Every key of the three documents: ours in order, then theirs', then the ancestor's.
fn keys_of(base: &ItemDoc, ours: &ItemDoc, theirs: &ItemDoc) -> Vec<String> {
    let mut keys: Vec<String> = ours.metadata.keys().cloned().collect();
    for key in theirs.metadata.keys().chain(base.metadata.keys()) {
        if !keys.contains(key) {
            keys.push(key.clone());
        }
    }
    keys
}

fn merge_scalar(
    key: &str,
    b: Option<&Value>,
    o: Option<&Value>,
    t: Option<&Value>,
    prefer: Side,
    merge: &mut ItemMerge,
) -> Option<Value> {
    if o == t || t == b {
        return o.cloned();
    }
    if o == b {
        merge.fields_from_theirs.push(key.to_string());
        return t.cloned();
    }
    let decision = Decision {
        field: key.to_string(),
        base: b.cloned(),
        ours: o.cloned(),
        theirs: t.cloned(),
        winner: prefer,
    };
    let kept = decision.retained().cloned();
    merge.decisions.push(decision);
    kept
}

fn later_instant(b: Option<&Value>, o: Option<&Value>, t: Option<&Value>) -> Option<Value> {
    if o == t || t == b {
        return o.cloned();
    }
    if o == b {
        return t.cloned();
    }
    let text = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or("").to_string();
    match compare_timestamp_strings(&text(o), &text(t)) {
        Ordering::Less => t.cloned(),
        _ => o.cloned(),
    }
}

/// Merges one collection: ours' entries in order, then theirs' new ones; an entry present in
/// the ancestor survives only if both sides kept it; an entry both sides hold merges as a
/// scalar (the preferred side wins a double edit).
fn merge_set(
    b: Option<&Value>,
    o: Option<&Value>,
    t: Option<&Value>,
    prefer: Side,
    id: fn(&Value) -> String,
) -> Option<Value> {
    if o == t || t == b {
        return o.cloned();
    }
    if o == b {
        return t.cloned();
    }
    let entries = |v: Option<&Value>| -> Vec<(String, Value)> {
        v.and_then(Value::as_array)
            .map(|rows| rows.iter().map(|r| (id(r), r.clone())).collect())
            .unwrap_or_default()
    };
    let (base, ours, theirs) = (entries(b), entries(o), entries(t));
    let find = |rows: &[(String, Value)], key: &str| -> Option<Value> {
        rows.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone())
    };
    let mut order: Vec<String> = Vec::new();
    for (key, _) in ours.iter().chain(theirs.iter()) {
        if !order.contains(key) {
            order.push(key.clone());
        }
    }
    let mut out = Vec::new();
    for key in order {
        let entry = match (find(&base, &key), find(&ours, &key), find(&theirs, &key)) {
            // Removed by either side (or by both).
            (Some(_), Some(_), None) | (Some(_), None, Some(_)) | (_, None, None) => None,
            (None, Some(o), None) => Some(o),
            (None, None, Some(t)) => Some(t),
            (b, Some(o), Some(t)) => Some(pick(b, o, t, prefer)),
        };
        out.extend(entry);
    }
    Some(Value::Array(out))
}

/// Returns the three-way value of one entry both sides hold.
fn pick(b: Option<Value>, o: Value, t: Value, prefer: Side) -> Value {
    if o == t || b.as_ref() == Some(&t) {
        o
    } else if b.as_ref() == Some(&o) || prefer == Side::Theirs {
        t
    } else {
        o
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(v: Value, body: &str) -> ItemDoc {
        ItemDoc {
            metadata: v.as_object().cloned().unwrap_or_default(),
            body: body.into(),
        }
    }

    fn base() -> ItemDoc {
        doc(
            json!({"id": "pm-1", "title": "T", "priority": 2, "tags": ["a", "b"],
                   "updated_at": "2026-01-01T00:00:00.000Z"}),
            "one\ntwo\nthree",
        )
    }

    fn with(changes: Value, body: &str) -> ItemDoc {
        let mut d = base();
        for (k, v) in changes.as_object().cloned().unwrap_or_default() {
            if v.is_null() {
                d.metadata.remove(&k);
            } else {
                d.metadata.insert(k, v);
            }
        }
        d.body = body.into();
        d
    }

    #[test]
    fn disjoint_edits_merge_cleanly() {
        let ours = with(
            json!({"priority": 0, "updated_at": "2026-01-03T00:00:00.000Z"}),
            "one\ntwo\nthree",
        );
        let theirs = with(
            json!({"tags": ["a", "b", "c"], "updated_at": "2026-01-02T00:00:00.000Z"}),
            "one\ntwo\nthree\nfour",
        );
        let m = merge_items(&base(), &ours, &theirs, Side::Ours);
        assert!(!m.is_conflicted());
        assert_eq!(m.doc.metadata["priority"], json!(0));
        assert_eq!(m.doc.metadata["tags"], json!(["a", "b", "c"]));
        assert_eq!(
            m.doc.metadata["updated_at"],
            json!("2026-01-03T00:00:00.000Z")
        );
        assert_eq!(m.doc.body, "one\ntwo\nthree\nfour");
        assert_eq!(m.fields_from_theirs, ["tags", "body"]);
    }

    #[test]
    fn a_double_edit_goes_to_the_preferred_side() {
        let ours = with(json!({"title": "Ours"}), "one\ntwo\nthree");
        let theirs = with(json!({"title": "Theirs"}), "one\ntwo\nthree");
        for (prefer, kept) in [(Side::Ours, "Ours"), (Side::Theirs, "Theirs")] {
            let m = merge_items(&base(), &ours, &theirs, prefer);
            assert_eq!(m.doc.metadata["title"], json!(kept));
            assert_eq!(m.conflicts(), ["title"]);
            assert_eq!(m.decisions[0].retained(), Some(&json!(kept)));
            assert_eq!(m.decisions[0].base, Some(json!("T")));
        }
    }

    #[test]
    fn sets_keep_additions_and_drop_removals_of_either_side() {
        let ours = with(json!({"tags": ["a", "x"]}), "one\ntwo\nthree");
        let theirs = with(json!({"tags": ["b", "y"]}), "one\ntwo\nthree");
        let m = merge_items(&base(), &ours, &theirs, Side::Ours);
        assert_eq!(m.doc.metadata["tags"], json!(["x", "y"]));
        assert_eq!(m.union_fields, ["tags"]);
        assert!(!m.is_conflicted());
    }

    #[test]
    fn annotations_union_by_identity() {
        let c = |t: &str, at: &str| json!({"created_at": at, "author": "a", "text": t});
        let b = with(json!({"comments": [c("old", "1")]}), "");
        let ours = with(json!({"comments": [c("old", "1"), c("mine", "2")]}), "");
        let theirs = with(json!({"comments": [c("old", "1"), c("yours", "3")]}), "");
        let m = merge_items(&b, &ours, &theirs, Side::Ours);
        assert_eq!(
            m.doc.metadata["comments"],
            json!([c("old", "1"), c("mine", "2"), c("yours", "3")])
        );
    }

    #[test]
    fn dependencies_edited_on_both_sides_prefer_one_entry() {
        let d = |kind: &str, author: &str| json!({"id": "pm-2", "kind": kind, "author": author});
        let b = with(json!({"dependencies": [d("blocks", "x")]}), "");
        let ours = with(json!({"dependencies": [d("blocks", "o")]}), "");
        let theirs = with(
            json!({"dependencies": [d("blocks", "t"), d("related", "t")]}),
            "",
        );
        let m = merge_items(&b, &ours, &theirs, Side::Ours);
        assert_eq!(
            m.doc.metadata["dependencies"],
            json!([d("blocks", "o"), d("related", "t")])
        );
        let m = merge_items(&b, &ours, &theirs, Side::Theirs);
        assert_eq!(
            m.doc.metadata["dependencies"],
            json!([d("blocks", "t"), d("related", "t")])
        );
    }

    #[test]
    fn a_key_removed_on_one_side_is_removed() {
        let ours = with(json!({"priority": null}), "one\ntwo\nthree");
        let m = merge_items(&base(), &ours, &base(), Side::Ours);
        assert!(!m.doc.metadata.contains_key("priority"));
        let m = merge_items(&base(), &base(), &ours, Side::Ours);
        assert!(!m.doc.metadata.contains_key("priority"));
        assert_eq!(m.fields_from_theirs, ["priority"]);
    }

    #[test]
    fn conflicting_body_lines_keep_markers() {
        let ours = with(json!({}), "one\nTWO\nthree");
        let theirs = with(json!({}), "one\n2\nthree");
        let m = merge_items(&base(), &ours, &theirs, Side::Ours);
        assert!(m.body_conflict);
        assert_eq!(m.conflicts(), ["body"]);
        assert!(m.doc.body.contains("<<<<<<< ours"));
    }
}
