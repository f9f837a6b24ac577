//! Expected item revisions (`--expect-hash`): the guard checked under the item lock before any
//! write, and the `changes_since` summary a refusal carries.

use serde_json::{Map, Value, json};

use super::MutationContext;
use crate::error::{Error, Result};
use crate::history::entry::HistoryEntry;
use crate::ids::normalize_id_input;

/// How many entries after the declared revision a refusal lists.
const CHANGES_SINCE_LIMIT: usize = 10;

/// One `--expect-hash` guard.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExpectedRevision {
    /// The item it binds to; `None` binds to the item the command names.
    pub id: Option<String>,
    /// The expected `item_hash` (64 lowercase hex digits).
    pub hash: String,
}

impl ExpectedRevision {
    /// Parses `<hash>` or `<id>=<hash>`; several may be separated by commas.
    ///
    /// # Errors
    /// `invalid_argument_value` for an empty value or a hash that is not 64 hex digits.
    pub fn parse_list(raw: &str) -> Result<Vec<ExpectedRevision>> {
        let invalid = |value: &str, reason: &str| Error::InvalidArgument {
            field: "--expect-hash".into(),
            value: value.into(),
            reason: reason.into(),
            allowed: Vec::new(),
        };
        let mut out = Vec::new();
        for part in raw.split(',') {
            let part = part.trim();
            if part.is_empty() {
                return Err(invalid(raw, "expected <item_hash> or <id>=<item_hash>"));
            }
            let (id, hash) = match part.split_once('=') {
                Some((id, hash)) if !id.trim().is_empty() => {
                    (Some(id.trim().to_string()), hash.trim())
                }
                Some(_) => return Err(invalid(part, "the id before '=' is empty")),
                None => (None, part),
            };
            let hash = hash.to_ascii_lowercase();
            if hash.len() != 64 || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(invalid(part, "an item_hash is 64 hexadecimal digits"));
            }
            out.push(ExpectedRevision { id, hash });
        }
        Ok(out)
    }

    fn binds_to(&self, id: &str, prefix: &str) -> bool {
        match &self.id {
            None => true,
            Some(raw) => raw == id || normalize_id_input(raw, prefix).iter().any(|c| c == id),
        }
    }
}

/// Refuses with `item_revision_conflict` when a guard bound to `id` names another revision
/// than `current`.
pub(crate) fn check_expected(
    ctx: &MutationContext,
    id: &str,
    current: &str,
    entries: &[HistoryEntry],
) -> Result<()> {
    let prefix = ctx.settings.id_prefix();
    let Some(guard) = ctx
        .expect
        .iter()
        .find(|g| g.binds_to(id, &prefix) && g.hash != current)
    else {
        return Ok(());
    };
    let (recorded, changes, omitted) = changes_since(entries, &guard.hash);
    Err(Error::RevisionConflict {
        id: id.to_string(),
        expected: guard.hash.clone(),
        current: current.to_string(),
        expected_recorded: recorded,
        changes_since: changes,
        changes_since_omitted: omitted,
    })
}

/// Returns whether any entry recorded `expected` as its `after_hash`, the newest (up to 10)
/// entries after the last such entry (all entries when none did) as `{op, author, ts,
/// fields}`, newest first, and how many more there were.
pub fn changes_since(entries: &[HistoryEntry], expected: &str) -> (bool, Vec<Value>, usize) {
    let start = entries.iter().rposition(|e| e.after_hash == expected);
    let after = match start {
        Some(i) => &entries[i + 1..],
        None => entries,
    };
    let listed: Vec<Value> = after
        .iter()
        .rev()
        .take(CHANGES_SINCE_LIMIT)
        .map(summary)
        .collect();
    (
        start.is_some(),
        listed,
        after.len().saturating_sub(CHANGES_SINCE_LIMIT),
    )
}

fn summary(entry: &HistoryEntry) -> Value {
    let mut fields: Vec<String> = Vec::new();
    for op in &entry.patch {
        let field = match op.path.strip_prefix("/metadata/") {
            Some(rest) => rest.split('/').next().unwrap_or(rest).to_string(),
            None if op.path == "/body" => "body".to_string(),
            None => continue,
        };
        if !fields.contains(&field) {
            fields.push(field);
        }
    }
    let mut map = Map::new();
    map.insert("op".into(), json!(entry.op));
    map.insert("author".into(), json!(entry.author));
    map.insert("ts".into(), json!(entry.ts));
    map.insert("fields".into(), json!(fields));
    Value::Object(map)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::entry::PatchOp;

    #[test]
    fn parses_bare_and_targeted_guards() -> Result<()> {
        let h = "A".repeat(64);
        let list = ExpectedRevision::parse_list(&format!("{h}, pm-x={}", "b".repeat(64)))?;
        assert_eq!(list[0].id, None);
        assert_eq!(list[0].hash, "a".repeat(64));
        assert_eq!(list[1].id.as_deref(), Some("pm-x"));
        for bad in ["", "abc", "=x", &format!("{h},")] {
            assert!(ExpectedRevision::parse_list(bad).is_err(), "{bad}");
        }
        Ok(())
    }

    #[test]
    fn changes_after_the_declared_revision() {
        let entry = |op: &str, after: &str| {
            HistoryEntry::new(
                "t",
                "a",
                op,
                vec![PatchOp::replace("/metadata/status", json!("x"))],
                "b",
                after,
            )
        };
        let entries = vec![
            entry("create", "h1"),
            entry("update", "h2"),
            entry("close", "h3"),
        ];
        let (recorded, list, omitted) = changes_since(&entries, "h1");
        assert!(recorded);
        assert_eq!(omitted, 0);
        assert_eq!(list.len(), 2);
        assert_eq!(list[0]["op"], "close");
        assert_eq!(list[0]["fields"], json!(["status"]));
        let (recorded, list, _) = changes_since(&entries, "zz");
        assert!(!recorded);
        assert_eq!(list.len(), 3);
    }
}
