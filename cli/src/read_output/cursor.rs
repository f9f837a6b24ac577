//! The universal output cursor (`--output-cursor`): `{v, c, p, o, n, f}` encode, decode and
//! validation, the collection fingerprint, and applying a cursor to its row collection.

use serde_json::{Map, Value, json};

use super::codec;
use super::rows::{self, RowContract, RowPath};
use super::surface::Surface;
use crate::failure::{CliError, ReadOutputRefusal, Result};

/// The longest cursor accepted, in characters.
pub const MAX_CURSOR_LEN: usize = 4096;

/// A continuation of one row collection of one read surface.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputCursor {
    /// The surface that printed it.
    pub surface: Surface,
    /// The dot path of the continued collection.
    pub path: String,
    /// Index of the first row not yet returned.
    pub offset: u64,
    /// Rows in the collection when the cursor was printed.
    pub total: u64,
    /// Content fingerprint of that collection.
    pub fingerprint: String,
}

impl OutputCursor {
    /// Returns the opaque cursor text.
    pub fn encode(&self) -> String {
        codec::encode_json(&json!({
            "v": 1,
            "c": self.surface.name(),
            "p": self.path,
            "o": self.offset,
            "n": self.total,
            "f": self.fingerprint,
        }))
    }

    /// Decodes and validates cursor text.
    ///
    /// # Errors
    /// `read_output_cursor_invalid` when the text is too long, not base64url JSON, or not a
    /// version-1 cursor of a canonical surface with a path, offset, total and fingerprint.
    pub fn decode(raw: &str) -> Result<OutputCursor> {
        let parsed = (raw.chars().count() <= MAX_CURSOR_LEN)
            .then(|| codec::decode_json(raw))
            .flatten()
            .and_then(|v| from_payload(&v));
        parsed.ok_or_else(|| {
            CliError::refused(
                ReadOutputRefusal::CursorInvalid,
                "--output-cursor",
                raw,
                "The read-output continuation cursor is malformed or unsupported.",
            )
        })
    }
}

fn from_payload(value: &Value) -> Option<OutputCursor> {
    let v = value.as_object()?;
    if v.get("v").and_then(codec::safe_non_negative) != Some(1) {
        return None;
    }
    let name = v.get("c")?.as_str()?;
    let surface = Surface::resolve(name).filter(|s| s.name() == name)?;
    let path = v.get("p")?.as_str().filter(|p| !p.is_empty())?;
    let offset = v.get("o").and_then(codec::safe_non_negative)?;
    let total = v
        .get("n")
        .and_then(codec::safe_non_negative)
        .filter(|n| *n >= 1)?;
    let fingerprint = v.get("f")?.as_str().filter(|f| !f.is_empty())?;
    Some(OutputCursor {
        surface,
        path: path.to_owned(),
        offset,
        total,
        fingerprint: fingerprint.to_owned(),
    })
}

/// Returns the fingerprint of a row collection: the first 16 characters of
/// base64url(SHA-256(stableStringify({path, value}))).
pub fn collection_fingerprint(path: &str, value: &Value) -> String {
    codec::content_fingerprint(&json!({"path": path, "value": value}))
}

/// Replaces the cursor's collection in `env` by its suffix from the cursor offset.
///
/// # Errors
/// `read_output_cursor_command_mismatch` when another surface printed the cursor;
/// `read_output_cursor_stale` when the collection is gone, its size differs, the offset is past
/// its end, or its content fingerprint changed.
pub fn apply(
    env: &mut Map<String, Value>,
    contract: &RowContract,
    surface: Surface,
    cursor: &OutputCursor,
    raw: &str,
) -> Result<RowPath> {
    if cursor.surface != surface {
        return Err(CliError::refused(
            ReadOutputRefusal::CursorCommandMismatch,
            "--output-cursor",
            raw,
            format!(
                "The read-output cursor belongs to {}, not {}.",
                cursor.surface.name(),
                surface.name()
            ),
        ));
    }
    let stale = || {
        CliError::refused(
            ReadOutputRefusal::CursorStale,
            "--output-cursor",
            raw,
            "The read-output continuation no longer matches the declared row collection; restart the bounded read.",
        )
    };
    let path = contract
        .continuation_paths()
        .into_iter()
        .find(|p| p.to_string() == cursor.path)
        .ok_or_else(stale)?;
    let value = rows::get_mut(env, &path).ok_or_else(stale)?;
    let total = rows::collection_len(value).ok_or_else(stale)? as u64;
    if total != cursor.total
        || cursor.offset > total
        || collection_fingerprint(&cursor.path, value) != cursor.fingerprint
    {
        return Err(stale());
    }
    let offset = usize::try_from(cursor.offset).map_err(|_| stale())?;
    rows::drop_prefix(value, offset);
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pm_engine::ErrorCode;

    fn code(r: Result<impl std::fmt::Debug>) -> &'static str {
        r.err().map_or("ok", |e| e.code().as_str())
    }

    fn cursor() -> OutputCursor {
        OutputCursor {
            surface: Surface::List,
            path: "items".into(),
            offset: 2,
            total: 4,
            fingerprint: "bXuNebIiQFzbvc2L".into(),
        }
    }

    #[test]
    fn encodes_the_documented_payload() {
        let text = cursor().encode();
        assert_eq!(
            codec::decode_json(&text),
            Some(json!({"v":1,"c":"list","p":"items","o":2,"n":4,"f":"bXuNebIiQFzbvc2L"}))
        );
        assert_eq!(OutputCursor::decode(&text).ok(), Some(cursor()));
    }

    #[test]
    fn malformed_cursors_are_refused() {
        let enc = |v: Value| codec::encode_json(&v);
        let bad = [
            "not-json".to_owned(),
            "x".repeat(4097),
            enc(json!([1])),
            enc(json!({"v":2,"c":"list","p":"items","o":0,"n":1,"f":"x"})),
            enc(json!({"v":1,"c":"ctx","p":"items","o":0,"n":1,"f":"x"})),
            enc(json!({"v":1,"c":"update","p":"items","o":0,"n":1,"f":"x"})),
            enc(json!({"v":1,"c":"list","p":"","o":0,"n":1,"f":"x"})),
            enc(json!({"v":1,"c":"list","p":"items","o":-1,"n":1,"f":"x"})),
            enc(json!({"v":1,"c":"list","p":"items","o":0,"n":0,"f":"x"})),
            enc(json!({"v":1,"c":"list","p":"items","o":0.5,"n":1,"f":"x"})),
            enc(json!({"v":1,"c":"list","p":"items","o":0,"n":1,"f":""})),
        ];
        for raw in bad {
            let err = OutputCursor::decode(&raw).err();
            assert_eq!(
                err.as_ref().map(CliError::code),
                Some(ErrorCode::ReadOutputCursorInvalid),
                "{raw}"
            );
            assert_eq!(
                err.map(|e| e.to_string()).as_deref(),
                Some("The read-output continuation cursor is malformed or unsupported.")
            );
        }
    }

    #[test]
    fn apply_checks_surface_size_offset_and_content() {
        let env = || -> Map<String, Value> {
            match json!({"items": [{"id": "a"}, {"id": "b"}, {"id": "c"}], "count": 3}) {
                Value::Object(m) => m,
                _ => Map::new(),
            }
        };
        let base = env();
        let contract = RowContract::derive(Surface::List, &base);
        let fp = collection_fingerprint("items", &base["items"]);
        let good = OutputCursor {
            surface: Surface::List,
            path: "items".into(),
            offset: 2,
            total: 3,
            fingerprint: fp.clone(),
        };
        let mut page = env();
        assert!(apply(&mut page, &contract, Surface::List, &good, "raw").is_ok());
        assert_eq!(page["items"], json!([{"id": "c"}]));

        let mut e = env();
        assert_eq!(
            code(apply(&mut e, &contract, Surface::Search, &good, "raw")),
            "read_output_cursor_command_mismatch"
        );
        let err = apply(&mut env(), &contract, Surface::Search, &good, "raw").err();
        assert_eq!(
            err.map(|e| e.to_string()).as_deref(),
            Some("The read-output cursor belongs to list, not search.")
        );
        for stale in [
            OutputCursor {
                total: 4,
                ..good.clone()
            },
            OutputCursor {
                offset: 4,
                ..good.clone()
            },
            OutputCursor {
                path: "other".into(),
                ..good.clone()
            },
            OutputCursor {
                fingerprint: "AAAAAAAAAAAAAAAA".into(),
                ..good.clone()
            },
        ] {
            let mut e = env();
            assert_eq!(
                code(apply(&mut e, &contract, Surface::List, &stale, "raw")),
                "read_output_cursor_stale"
            );
        }
        // Same size, different content: stale.
        let mut changed = env();
        changed["items"][0]["id"] = json!("z");
        assert_eq!(
            code(apply(&mut changed, &contract, Surface::List, &good, "raw")),
            "read_output_cursor_stale"
        );
    }
}
