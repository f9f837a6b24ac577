//! The history entry model: one line of `history/<id>.jsonl` as typed fields plus the unknown
//! keys it carried, its conversion from parsed JSON, and pm's exact serialization of new lines.

use serde_json::{Map, Value};

use crate::json::to_compact;

/// The patch root pm used before about 2026-03; read as [`METADATA_ROOT`].
pub const LEGACY_ROOT: &str = "/front_matter";
/// The patch root of current lines.
pub const METADATA_ROOT: &str = "/metadata";
/// The `item_hash_version` every current write records.
pub const CURRENT_HASH_VERSION: u32 = 2;

/// The kind of an RFC 6902 operation.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum PatchOpKind {
    /// `add`.
    Add,
    /// `remove`.
    Remove,
    /// `replace`.
    Replace,
    /// `move`.
    Move,
    /// `copy`.
    Copy,
    /// `test`.
    Test,
    /// Any other `op` text; it never applies (replay reports `patch_apply_failed`).
    Unknown(String),
}

impl PatchOpKind {
    /// Returns the kind for an `op` string.
    pub fn parse(op: &str) -> PatchOpKind {
        match op {
            "add" => PatchOpKind::Add,
            "remove" => PatchOpKind::Remove,
            "replace" => PatchOpKind::Replace,
            "move" => PatchOpKind::Move,
            "copy" => PatchOpKind::Copy,
            "test" => PatchOpKind::Test,
            other => PatchOpKind::Unknown(other.to_string()),
        }
    }

    /// Returns the `op` string.
    pub fn as_str(&self) -> &str {
        match self {
            PatchOpKind::Add => "add",
            PatchOpKind::Remove => "remove",
            PatchOpKind::Replace => "replace",
            PatchOpKind::Move => "move",
            PatchOpKind::Copy => "copy",
            PatchOpKind::Test => "test",
            PatchOpKind::Unknown(op) => op,
        }
    }
}

/// One RFC 6902 operation of an entry's `patch`.
///
/// `path` and `from` are always rooted at `/metadata` or `/body`; a legacy `/front_matter` path
/// is mapped on read and its original text kept in `original_path` / `original_from`, which
/// serialization writes back unchanged.
#[derive(Clone, Debug, PartialEq)]
pub struct PatchOp {
    /// The operation.
    pub op: PatchOpKind,
    /// The JSON Pointer target, with `/front_matter` mapped to `/metadata`.
    pub path: String,
    /// The source pointer of `move` and `copy` (mapped like `path`).
    pub from: Option<String>,
    /// The value of `add`, `replace` and `test`.
    pub value: Option<Value>,
    /// The path as written, when it differs from `path` (a legacy `/front_matter` root).
    pub original_path: Option<String>,
    /// The `from` pointer as written, when it differs from `from`.
    pub original_from: Option<String>,
}

impl PatchOp {
    /// Returns an `add` of `value` at `path`.
    pub fn add(path: impl Into<String>, value: Value) -> PatchOp {
        PatchOp::with_value(PatchOpKind::Add, path.into(), Some(value))
    }

    /// Returns a `replace` of the value at `path` with `value`.
    pub fn replace(path: impl Into<String>, value: Value) -> PatchOp {
        PatchOp::with_value(PatchOpKind::Replace, path.into(), Some(value))
    }

    /// Returns a `remove` of the value at `path`.
    pub fn remove(path: impl Into<String>) -> PatchOp {
        PatchOp::with_value(PatchOpKind::Remove, path.into(), None)
    }

    fn with_value(op: PatchOpKind, path: String, value: Option<Value>) -> PatchOp {
        PatchOp {
            op,
            path,
            from: None,
            value,
            original_path: None,
            original_from: None,
        }
    }

    /// Returns the path as it was written in the stream (legacy root included).
    pub fn written_path(&self) -> &str {
        self.original_path.as_deref().unwrap_or(&self.path)
    }

    /// Returns the JSON object pm writes for this operation: `{op, from?, path, value?}`.
    pub fn to_value(&self) -> Value {
        let mut map = Map::new();
        map.insert("op".into(), Value::String(self.op.as_str().to_string()));
        if let Some(from) = self.original_from.as_ref().or(self.from.as_ref()) {
            map.insert("from".into(), Value::String(from.clone()));
        }
        map.insert(
            "path".into(),
            Value::String(self.written_path().to_string()),
        );
        if let Some(value) = &self.value {
            map.insert("value".into(), value.clone());
        }
        Value::Object(map)
    }

    /// Builds an operation from one element of a parsed `patch` array.
    ///
    /// # Errors
    /// Returns a description when the element is not an object with string `op` and `path`.
    pub fn from_value(value: Value) -> Result<PatchOp, String> {
        let Value::Object(mut map) = value else {
            return Err("patch operation is not an object".into());
        };
        let op = match map.shift_remove("op") {
            Some(Value::String(op)) => PatchOpKind::parse(&op),
            _ => return Err("patch operation has no string `op`".into()),
        };
        let Some(Value::String(written)) = map.shift_remove("path") else {
            return Err("patch operation has no string `path`".into());
        };
        let (path, original_path) = map_legacy_root(written);
        let (from, original_from) = match map.shift_remove("from") {
            Some(Value::String(written)) => {
                let (from, original) = map_legacy_root(written);
                (Some(from), original)
            }
            Some(Value::Null) | None => (None, None),
            Some(_) => return Err("patch operation has a non-string `from`".into()),
        };
        Ok(PatchOp {
            op,
            path,
            from,
            value: map.shift_remove("value"),
            original_path,
            original_from,
        })
    }
}

/// Maps a `/front_matter` root to `/metadata`; returns the mapped pointer and, when it changed,
/// the original text.
pub(super) fn map_legacy_root(pointer: String) -> (String, Option<String>) {
    let rest = match pointer.strip_prefix(LEGACY_ROOT) {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => rest,
        _ => return (pointer, None),
    };
    (format!("{METADATA_ROOT}{rest}"), Some(pointer))
}

/// The `op` of `pm delete` entries. A delete's after-state is always the empty document, so a
/// stream whose last entry is one describes a deleted item (`pm restore` brings it back).
pub const DELETE_OP: &str = "delete";

/// One history entry (one line of a stream).
///
/// Known keys are typed; any other key is kept in `extra` so that a rewrite loses nothing.
/// A known optional key with an unexpected JSON type (or `null`) is kept in `extra` as well.
#[derive(Clone, Debug, PartialEq)]
pub struct HistoryEntry {
    /// The item's new `updated_at` (`created_at` for create).
    pub ts: String,
    /// The resolved author.
    pub author: String,
    /// `asserted`, `configured`, `detected` or `unknown`.
    pub author_source: Option<String>,
    /// The detected agent harness.
    pub agent_harness: Option<String>,
    /// The agent model.
    pub agent_model: Option<String>,
    /// Where the agent model came from.
    pub agent_model_source: Option<String>,
    /// The agent instance (24 hex characters).
    pub agent_instance: Option<String>,
    /// `{model|effort|role|topic: null | {value, source, …}}`.
    pub agent_provenance: Option<Value>,
    /// `{id, label?, parent_id?}`.
    pub agent_episode: Option<Value>,
    /// The operation name (`create`, `update`, `history_redact`, `schema:add-type`, …).
    pub op: String,
    /// The RFC 6902 patch from the before state to the after state.
    pub patch: Vec<PatchOp>,
    /// Hash of the state before the patch.
    pub before_hash: String,
    /// Hash of the state after the patch.
    pub after_hash: String,
    /// The hash epoch; absent on old lines.
    pub item_hash_version: Option<u32>,
    /// The message (`--message`, `explicit_unset=…`); absent when undefined.
    pub message: Option<String>,
    /// Structured context (`author_acknowledgment`, `recurrence`, …).
    pub context: Option<Value>,
    /// Every other key of the line, in the order read.
    pub extra: Map<String, Value>,
}

/// The known keys of a history line, in pm's write order.
const FIELD_ORDER: [&str; 16] = [
    "ts",
    "author",
    "author_source",
    "agent_harness",
    "agent_model",
    "agent_model_source",
    "agent_instance",
    "agent_provenance",
    "agent_episode",
    "op",
    "patch",
    "before_hash",
    "after_hash",
    "item_hash_version",
    "message",
    "context",
];

impl HistoryEntry {
    /// Returns a new current-epoch entry (`item_hash_version: 2`) with no optional fields set.
    pub fn new(
        ts: impl Into<String>,
        author: impl Into<String>,
        op: impl Into<String>,
        patch: Vec<PatchOp>,
        before_hash: impl Into<String>,
        after_hash: impl Into<String>,
    ) -> HistoryEntry {
        HistoryEntry {
            ts: ts.into(),
            author: author.into(),
            author_source: None,
            agent_harness: None,
            agent_model: None,
            agent_model_source: None,
            agent_instance: None,
            agent_provenance: None,
            agent_episode: None,
            op: op.into(),
            patch,
            before_hash: before_hash.into(),
            after_hash: after_hash.into(),
            item_hash_version: Some(CURRENT_HASH_VERSION),
            message: None,
            context: None,
            extra: Map::new(),
        }
    }

    /// Builds an entry from a parsed line.
    ///
    /// # Errors
    /// Returns a description when the value is not an object, a required key (`ts`, `author`,
    /// `op`, `patch`, `before_hash`, `after_hash`) is missing or mistyped, a patch operation is
    /// malformed, or `item_hash_version` is present but not 1 or 2.
    pub fn from_value(value: Value) -> Result<HistoryEntry, String> {
        let Value::Object(mut map) = value else {
            return Err("history entry is not a JSON object".into());
        };
        let mut extra = Map::new();
        let ts = required_string(&mut map, "ts")?;
        let author = required_string(&mut map, "author")?;
        let op = required_string(&mut map, "op")?;
        let before_hash = required_string(&mut map, "before_hash")?;
        let after_hash = required_string(&mut map, "after_hash")?;
        let patch = match map.shift_remove("patch") {
            Some(Value::Array(ops)) => ops
                .into_iter()
                .enumerate()
                .map(|(i, op)| PatchOp::from_value(op).map_err(|e| format!("{e} (op {i})")))
                .collect::<Result<Vec<_>, _>>()?,
            _ => return Err("history entry has no `patch` array".into()),
        };
        let item_hash_version = match map.shift_remove("item_hash_version") {
            None | Some(Value::Null) => None,
            Some(Value::Number(n)) => match n.as_f64() {
                Some(1.0) => Some(1),
                Some(2.0) => Some(2),
                _ => return Err(format!("unsupported item_hash_version {n}")),
            },
            Some(other) => {
                return Err(format!(
                    "item_hash_version is not a number: {}",
                    to_compact(&other)
                ));
            }
        };
        let mut entry = HistoryEntry {
            ts,
            author,
            author_source: optional_string(&mut map, "author_source", &mut extra),
            agent_harness: optional_string(&mut map, "agent_harness", &mut extra),
            agent_model: optional_string(&mut map, "agent_model", &mut extra),
            agent_model_source: optional_string(&mut map, "agent_model_source", &mut extra),
            agent_instance: optional_string(&mut map, "agent_instance", &mut extra),
            agent_provenance: optional_value(&mut map, "agent_provenance", &mut extra),
            agent_episode: optional_value(&mut map, "agent_episode", &mut extra),
            op,
            patch,
            before_hash,
            after_hash,
            item_hash_version,
            message: optional_string(&mut map, "message", &mut extra),
            context: optional_value(&mut map, "context", &mut extra),
            extra: Map::new(),
        };
        extra.extend(map);
        entry.extra = extra;
        Ok(entry)
    }

    /// Returns the line as a JSON object: known keys in pm's order, then `extra`.
    pub fn to_value(&self) -> Value {
        let mut map = Map::new();
        for key in FIELD_ORDER {
            if let Some(value) = self.field(key) {
                map.insert(key.to_string(), value);
            }
        }
        for (key, value) in &self.extra {
            if !map.contains_key(key) {
                map.insert(key.clone(), value.clone());
            }
        }
        Value::Object(map)
    }

    /// Returns the line text pm writes (compact `JSON.stringify`, no trailing newline).
    pub fn to_line(&self) -> String {
        to_compact(&self.to_value())
    }

    fn field(&self, key: &str) -> Option<Value> {
        let string = |s: &Option<String>| s.as_ref().map(|s| Value::String(s.clone()));
        match key {
            "ts" => Some(Value::String(self.ts.clone())),
            "author" => Some(Value::String(self.author.clone())),
            "author_source" => string(&self.author_source),
            "agent_harness" => string(&self.agent_harness),
            "agent_model" => string(&self.agent_model),
            "agent_model_source" => string(&self.agent_model_source),
            "agent_instance" => string(&self.agent_instance),
            "agent_provenance" => self.agent_provenance.clone(),
            "agent_episode" => self.agent_episode.clone(),
            "op" => Some(Value::String(self.op.clone())),
            "patch" => Some(Value::Array(
                self.patch.iter().map(PatchOp::to_value).collect(),
            )),
            "before_hash" => Some(Value::String(self.before_hash.clone())),
            "after_hash" => Some(Value::String(self.after_hash.clone())),
            "item_hash_version" => self.item_hash_version.map(Value::from),
            "message" => string(&self.message),
            "context" => self.context.clone(),
            _ => None,
        }
    }
}

fn required_string(map: &mut Map<String, Value>, key: &str) -> Result<String, String> {
    match map.shift_remove(key) {
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(format!("history entry key `{key}` is not a string")),
        None => Err(format!("history entry has no `{key}`")),
    }
}

/// Takes an optional string key; any other JSON type (`null` included) moves to `extra`.
fn optional_string(
    map: &mut Map<String, Value>,
    key: &str,
    extra: &mut Map<String, Value>,
) -> Option<String> {
    match map.shift_remove(key)? {
        Value::String(s) => Some(s),
        other => {
            extra.insert(key.to_string(), other);
            None
        }
    }
}

/// Takes an optional structured key; `null` moves to `extra` so that it survives a rewrite.
fn optional_value(
    map: &mut Map<String, Value>,
    key: &str,
    extra: &mut Map<String, Value>,
) -> Option<Value> {
    match map.shift_remove(key)? {
        Value::Null => {
            extra.insert(key.to_string(), Value::Null);
            None
        }
        other => Some(other),
    }
}

/// Returns the `message` pm records for a mutation.
///
/// `create` always records one (the text, default `""`); other ops only when a message was
/// given or fields were explicitly unset. Unset keys are appended as `explicit_unset=<k1,k2>`,
/// after ` | ` when there is message text.
pub fn entry_message(
    text: Option<&str>,
    explicit_unset: &[&str],
    is_create: bool,
) -> Option<String> {
    let unset = (!explicit_unset.is_empty()).then(|| explicit_unset.join(","));
    match (text, unset) {
        (Some(text), Some(unset)) if !text.is_empty() => {
            Some(format!("{text} | explicit_unset={unset}"))
        }
        (_, Some(unset)) => Some(format!("explicit_unset={unset}")),
        (Some(text), None) => Some(text.to_string()),
        (None, None) => is_create.then(String::new),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const T73K_CLOSE: &str = r#"{"ts":"2026-06-07T17:03:45.212Z","author":"maintainer-agent","op":"close","patch":[{"op":"replace","path":"/metadata/updated_at","value":"2026-06-07T17:03:45.212Z"},{"op":"replace","path":"/metadata/status","value":"closed"},{"op":"add","path":"/metadata/close_reason","value":"Shipped: CONTRIBUTING PR-matrix description corrected to match ci.yml (full matrix on PRs)."}],"before_hash":"99be25b86d5674620157d61d627e9ea76b835813b3de60f0b7a0bf4cc0082a08","after_hash":"e6926ffbff53076cbd989c3bfaea1a07e70e42d0faf723c192b17a38222d66ef"}"#;

    const CLAIM_V2: &str = r#"{"ts":"2026-08-15T02:26:02.485Z","author":"harness:codex","author_source":"detected","agent_harness":"codex","agent_instance":"217bde283203d510dd91ecae","agent_provenance":{"model":null,"effort":null,"role":null,"topic":null},"op":"claim","patch":[{"op":"replace","path":"/metadata/updated_at","value":"2026-08-15T02:26:02.485Z"},{"op":"add","path":"/metadata/assignee","value":"harness:codex"},{"op":"add","path":"/metadata/claim_principal","value":"harness:codex#217bde283203d510dd91ecae"}],"before_hash":"bb6ec7a89d90536e365dd5a32a1ac83a2f8748fb75be27a839f7f22e3f5d442f","after_hash":"dbd15969383dacbb4da066983c14a98a5e34bb69363b485a79086207f01a5fd2","item_hash_version":2}"#;

    fn parse(line: &str) -> HistoryEntry {
        let value: Value = serde_json::from_str(line).expect("test line is JSON");
        HistoryEntry::from_value(value).expect("test line is an entry")
    }

    #[test]
    fn real_lines_round_trip_byte_for_byte() {
        for line in [T73K_CLOSE, CLAIM_V2] {
            assert_eq!(parse(line).to_line(), line);
        }
        let claim = parse(CLAIM_V2);
        assert_eq!(claim.item_hash_version, Some(2));
        assert_eq!(
            claim.agent_instance.as_deref(),
            Some("217bde283203d510dd91ecae")
        );
        assert_eq!(claim.patch[1].op, PatchOpKind::Add);
    }

    #[test]
    fn legacy_front_matter_paths_map_and_serialize_as_written() {
        let line = r#"{"ts":"2026-03-03T20:42:03.764Z","author":"steve","op":"claim","patch":[{"op":"replace","path":"/front_matter/updated_at","value":"x"},{"op":"move","from":"/front_matter","path":"/front_matterx"}],"before_hash":"a","after_hash":"b"}"#;
        let entry = parse(line);
        assert_eq!(entry.patch[0].path, "/metadata/updated_at");
        assert_eq!(
            entry.patch[0].original_path.as_deref(),
            Some("/front_matter/updated_at")
        );
        assert_eq!(entry.patch[1].from.as_deref(), Some("/metadata"));
        assert_eq!(entry.patch[1].path, "/front_matterx");
        assert_eq!(entry.patch[1].original_path, None);
        assert_eq!(
            entry.to_line(),
            r#"{"ts":"2026-03-03T20:42:03.764Z","author":"steve","op":"claim","patch":[{"op":"replace","path":"/front_matter/updated_at","value":"x"},{"op":"move","from":"/front_matter","path":"/front_matterx"}],"before_hash":"a","after_hash":"b"}"#
        );
    }

    #[test]
    fn unknown_keys_survive_in_any_order() {
        let line = r#"{"zz":1,"after_hash":"b","op":"update","before_hash":"a","patch":[],"author":"x","ts":"t","message":7,"weird":{"k":[1]}}"#;
        let entry = parse(line);
        assert_eq!(entry.message, None);
        assert_eq!(entry.extra.get("zz"), Some(&json!(1)));
        assert_eq!(entry.extra.get("message"), Some(&json!(7)));
        assert_eq!(
            entry.to_line(),
            r#"{"ts":"t","author":"x","op":"update","patch":[],"before_hash":"a","after_hash":"b","message":7,"zz":1,"weird":{"k":[1]}}"#
        );
    }

    #[test]
    fn shape_errors_are_described() {
        let bad = [
            (json!([1]), "not a JSON object"),
            (
                json!({"ts": "t", "author": "a", "op": "x", "before_hash": "a", "after_hash": "b"}),
                "no `patch`",
            ),
            (
                json!({"ts": "t", "author": "a", "op": "x", "patch": [], "before_hash": 1, "after_hash": "b"}),
                "`before_hash` is not a string",
            ),
            (
                json!({"ts": "t", "author": "a", "op": "x", "patch": [{"path": "/a"}], "before_hash": "a", "after_hash": "b"}),
                "no string `op`",
            ),
            (
                json!({"ts": "t", "author": "a", "op": "x", "patch": [], "before_hash": "a", "after_hash": "b", "item_hash_version": 3}),
                "unsupported item_hash_version 3",
            ),
        ];
        for (value, expected) in bad {
            let err = HistoryEntry::from_value(value).expect_err("shape error");
            assert!(err.contains(expected), "{err} should mention {expected}");
        }
    }

    #[test]
    fn new_entries_use_pm_field_order_and_epoch_two() {
        let mut entry = HistoryEntry::new(
            "2026-09-01T00:06:00.000Z",
            "golden-author",
            "update",
            vec![
                PatchOp::remove("/metadata/deadline"),
                PatchOp::replace("/metadata/updated_at", json!("2026-09-01T00:06:00.000Z")),
            ],
            "a".repeat(64),
            "b".repeat(64),
        );
        entry.context = Some(json!({"recurrence": {"reason": "r"}}));
        entry.message = entry_message(Some("Close"), &[], false);
        entry.agent_provenance = Some(json!({"role": {"value": "implementer", "source": "argv"}}));
        entry.author_source = Some("asserted".into());
        let expected = format!(
            r#"{{"ts":"2026-09-01T00:06:00.000Z","author":"golden-author","author_source":"asserted","agent_provenance":{{"role":{{"value":"implementer","source":"argv"}}}},"op":"update","patch":[{{"op":"remove","path":"/metadata/deadline"}},{{"op":"replace","path":"/metadata/updated_at","value":"2026-09-01T00:06:00.000Z"}}],"before_hash":"{}","after_hash":"{}","item_hash_version":2,"message":"Close","context":{{"recurrence":{{"reason":"r"}}}}}}"#,
            "a".repeat(64),
            "b".repeat(64)
        );
        assert_eq!(entry.to_line(), expected);
    }

    #[test]
    fn message_rules() {
        assert_eq!(entry_message(None, &[], true).as_deref(), Some(""));
        assert_eq!(entry_message(None, &[], false), None);
        assert_eq!(entry_message(Some(""), &[], false).as_deref(), Some(""));
        assert_eq!(
            entry_message(Some("Seed task"), &["comments", "notes"], true).as_deref(),
            Some("Seed task | explicit_unset=comments,notes")
        );
        assert_eq!(
            entry_message(None, &["assignee"], false).as_deref(),
            Some("explicit_unset=assignee")
        );
        assert_eq!(
            entry_message(Some(""), &["assignee"], true).as_deref(),
            Some("explicit_unset=assignee")
        );
    }
}
