//! `history/_workspace.jsonl`: the audited stream of tracker documents (settings,
//! schema, assurance). Replays to a synthetic workspace item and checks that every recorded
//! document agrees with the file on disk.

use std::path::{Component, Path};

use serde::Serialize;
use serde_json::{Map, Value};

use super::entry::HistoryEntry;
use super::replay::{ChainReport, verify_chain};
use crate::json::to_stable;

/// The stream id of the workspace history (`history/_workspace.jsonl`).
pub const WORKSPACE_STREAM_ID: &str = "_workspace";

/// The replayed workspace stream.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkspaceReplay {
    /// Chain verification of the stream; `chain.doc` is the synthetic workspace item.
    pub chain: ChainReport,
}

impl WorkspaceReplay {
    /// Returns the recorded documents: tracker-relative path → parsed JSON.
    pub fn documents(&self) -> Map<String, Value> {
        match self.chain.doc.metadata.get("documents") {
            Some(Value::Object(documents)) => documents.clone(),
            _ => Map::new(),
        }
    }
}

/// Replays and verifies the workspace stream.
pub fn replay_workspace(entries: &[HistoryEntry]) -> WorkspaceReplay {
    WorkspaceReplay {
        chain: verify_chain(entries),
    }
}

/// How a recorded document disagrees with the tracker.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DisagreementKind {
    /// The file does not exist.
    Missing,
    /// The file cannot be read or is not JSON, or the recorded path is not a safe relative path.
    Unreadable,
    /// `stableStringify` of the file differs from the recorded value.
    Differs,
}

/// A recorded document whose file does not match it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DocumentDisagreement {
    /// The tracker-relative path, as recorded.
    pub path: String,
    /// What is wrong.
    pub kind: DisagreementKind,
    /// Reader or parser detail.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// Checks every recorded document against the file at `tracker_root/<path>`: they agree when
/// `stableStringify(file JSON) == stableStringify(recorded)`. Returns the disagreements, in the
/// order the documents were recorded.
pub fn check_workspace_documents(
    tracker_root: &Path,
    documents: &Map<String, Value>,
) -> Vec<DocumentDisagreement> {
    let mut out = Vec::new();
    for (relative, recorded) in documents {
        let disagreement = |kind, detail: Option<String>| DocumentDisagreement {
            path: relative.clone(),
            kind,
            detail,
        };
        let rel = Path::new(relative);
        let safe = !relative.is_empty()
            && rel
                .components()
                .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
        if !safe {
            out.push(disagreement(
                DisagreementKind::Unreadable,
                Some("not a tracker-relative path".into()),
            ));
            continue;
        }
        let path = tracker_root.join(rel);
        // Confined: a symlink on the way is unreadable, never followed out of the tracker.
        let bytes = match crate::confine::read(tracker_root, &path) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => {
                out.push(disagreement(DisagreementKind::Missing, None));
                continue;
            }
            Err(err) => {
                out.push(disagreement(
                    DisagreementKind::Unreadable,
                    Some(err.to_string()),
                ));
                continue;
            }
        };
        match serde_json::from_slice::<Value>(&bytes) {
            Ok(on_disk) if to_stable(&on_disk) == to_stable(recorded) => {}
            Ok(_) => out.push(disagreement(DisagreementKind::Differs, None)),
            Err(err) => out.push(disagreement(
                DisagreementKind::Unreadable,
                Some(err.to_string()),
            )),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::{EMPTY_DOC_HASH, HashEpoch, item_hash};
    use crate::history::diff::item_patch;
    use crate::item::ItemDoc;
    use serde_json::json;

    fn workspace_doc(documents: Value) -> ItemDoc {
        let metadata = json!({
            "id": "_workspace", "title": "Workspace state",
            "description": "Audited singleton workspace document state.", "type": "Chore",
            "status": "open", "priority": 2, "tags": ["workspace-history"],
            "created_at": "2026-01-01T00:00:00.000Z", "updated_at": "2026-01-01T00:00:00.000Z",
            "documents": documents,
        });
        ItemDoc {
            metadata: metadata.as_object().cloned().expect("object"),
            body: String::new(),
        }
    }

    fn stream(documents: Value) -> Vec<HistoryEntry> {
        let doc = workspace_doc(documents);
        let hash = item_hash(&doc, HashEpoch::V2);
        let write = HistoryEntry::new(
            "2026-01-01T00:00:00.000Z",
            "me",
            "schema:add-type",
            item_patch(&ItemDoc::empty(), &doc),
            EMPTY_DOC_HASH,
            hash.clone(),
        );
        let mut audit = HistoryEntry::new(
            "2026-01-02T00:00:00.000Z",
            "me",
            "history:author-acknowledge",
            Vec::new(),
            hash.clone(),
            hash,
        );
        audit.message = Some("ack".into());
        vec![write, audit]
    }

    #[test]
    fn replays_to_the_synthetic_item_and_checks_documents() -> Result<(), Box<dyn std::error::Error>>
    {
        let types = json!({"types": [{"name": "Spike", "folder": "spikes"}]});
        let documents =
            json!({"schema/types.json": types, "assurance.json": {"a": 1}, "../x.json": {}});
        let replay = replay_workspace(&stream(documents));
        assert!(replay.chain.is_ok(), "{:?}", replay.chain.issues);
        assert_eq!(replay.chain.doc.id(), Some("_workspace"));
        assert_eq!(replay.documents().len(), 3);

        let dir = tempfile::tempdir()?;
        std::fs::create_dir_all(dir.path().join("schema"))?;
        // Same data, other key order and formatting: agrees.
        crate::atomic::write(
            &dir.path().join("schema/types.json"),
            b"{\n  \"types\": [ {\"folder\": \"spikes\", \"name\": \"Spike\"} ]\n}\n",
        )?;
        let found = check_workspace_documents(dir.path(), &replay.documents());
        let kinds: Vec<(&str, DisagreementKind)> =
            found.iter().map(|d| (d.path.as_str(), d.kind)).collect();
        assert_eq!(
            kinds,
            [
                ("assurance.json", DisagreementKind::Missing),
                ("../x.json", DisagreementKind::Unreadable),
            ]
        );
        crate::atomic::write(&dir.path().join("assurance.json"), b"{\"a\": 2}")?;
        let found = check_workspace_documents(dir.path(), &replay.documents());
        assert_eq!(found[0].kind, DisagreementKind::Differs);
        Ok(())
    }
}
