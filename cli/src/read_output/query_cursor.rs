//! The query (producer) cursor of `list`, `search` and `context`:
//! `{version, fingerprint, after_id, after_index}` encode, decode, validation and paging.

use serde_json::{Map, Value};

use super::codec;
use super::cursor::MAX_CURSOR_LEN;
use crate::failure::{CliError, ReadOutputRefusal, Result};

/// A position in an ordered query result: after the row `after_id` (at `after_index`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueryCursor {
    /// Fingerprint of the query that produced the page ([`query_fingerprint`]).
    pub fingerprint: String,
    /// Id of the last row already returned.
    pub after_id: String,
    /// 0-based index of that row, when the producer recorded it.
    pub after_index: Option<u64>,
    /// Opaque producer snapshot token, when the producer recorded one.
    pub snapshot: Option<String>,
}

/// Returns the fingerprint of a query: the first 24 hex characters of
/// SHA-256(`command` NUL stableStringify(`contract`)), where the contract holds every
/// query-semantic option (filters, sort, order, tree), never presentation flags.
pub fn query_fingerprint(command: &str, contract: &Value) -> String {
    let mut input = command.as_bytes().to_vec();
    input.push(0);
    input.extend_from_slice(pm_engine::json::to_stable(contract).as_bytes());
    let mut hex = pm_engine::hash::sha256_hex(&input);
    hex.truncate(24);
    hex
}

impl QueryCursor {
    /// Returns the opaque cursor text.
    pub fn encode(&self) -> String {
        let mut payload = Map::new();
        payload.insert("version".into(), Value::from(1));
        payload.insert("fingerprint".into(), Value::from(self.fingerprint.clone()));
        payload.insert("after_id".into(), Value::from(self.after_id.clone()));
        if let Some(index) = self.after_index {
            payload.insert("after_index".into(), Value::from(index));
        }
        if let Some(snapshot) = &self.snapshot {
            payload.insert("snapshot".into(), Value::from(snapshot.clone()));
        }
        codec::encode_json(&Value::Object(payload))
    }

    /// Decodes cursor text without checking it against a query (for rebasing a producer
    /// cursor after compaction); `None` when it is not a valid cursor.
    pub fn parse(raw: &str) -> Option<QueryCursor> {
        let text = raw.trim();
        if text.len() > MAX_CURSOR_LEN || !codec::is_strict_base64url(text) {
            return None;
        }
        from_payload(&codec::decode_json(text)?)
    }

    /// Decodes cursor text and checks it belongs to the query with `expected` fingerprint.
    ///
    /// # Errors
    /// `invalid_query_cursor`: "Query cursor is malformed." (not base64url JSON, longer than
    /// 4096), "Query cursor version or payload is unsupported.", or "Query cursor does not
    /// match the current filters, sort, or query (<a> != <b>)."
    pub fn decode(raw: &str, expected: &str) -> Result<QueryCursor> {
        let text = raw.trim();
        if text.len() > MAX_CURSOR_LEN || !codec::is_strict_base64url(text) {
            return Err(CliError::refused(
                ReadOutputRefusal::InvalidQueryCursor,
                "--after",
                raw,
                "Query cursor is malformed.",
            ));
        }
        let payload = codec::decode_json(text).ok_or_else(|| {
            CliError::refused(
                ReadOutputRefusal::InvalidQueryCursor,
                "--after",
                raw,
                "Query cursor is malformed.",
            )
        })?;
        let cursor = from_payload(&payload).ok_or_else(|| {
            CliError::refused(
                ReadOutputRefusal::InvalidQueryCursor,
                "--after",
                raw,
                "Query cursor version or payload is unsupported.",
            )
        })?;
        if cursor.fingerprint != expected {
            return Err(CliError::refused(
                ReadOutputRefusal::InvalidQueryCursor,
                "--after",
                raw,
                format!(
                    "Query cursor does not match the current filters, sort, or query ({} != {expected}).",
                    cursor.fingerprint
                ),
            ));
        }
        Ok(cursor)
    }

    /// Returns the index of the first row after the cursor in `ids` (the ordered result):
    /// after the cursor's row when present, else at its recorded index (clamped).
    ///
    /// # Errors
    /// `invalid_query_cursor` when the row is gone and the cursor recorded no index.
    pub fn resume_index<'a>(
        &self,
        ids: impl IntoIterator<Item = &'a str>,
        len: usize,
        raw: &str,
    ) -> Result<usize> {
        if let Some(found) = ids.into_iter().position(|id| id == self.after_id) {
            return Ok(found + 1);
        }
        match self.after_index {
            Some(index) => Ok(usize::try_from(index).unwrap_or(usize::MAX).min(len)),
            None => Err(CliError::refused(
                ReadOutputRefusal::InvalidQueryCursor,
                "--after",
                raw,
                format!(
                    "Query cursor item {} is no longer present in this result set.",
                    self.after_id
                ),
            )),
        }
    }
}

fn from_payload(value: &Value) -> Option<QueryCursor> {
    let v = value.as_object()?;
    if v.get("version").and_then(codec::safe_non_negative) != Some(1) {
        return None;
    }
    let fingerprint = v.get("fingerprint")?.as_str()?.to_owned();
    let after_id = v.get("after_id")?.as_str().filter(|s| !s.is_empty())?;
    let after_index = match v.get("after_index") {
        None => None,
        Some(n) => Some(codec::safe_non_negative(n)?),
    };
    let snapshot = match v.get("snapshot") {
        None => None,
        Some(s) => Some(s.as_str().filter(|s| !s.is_empty())?.to_owned()),
    };
    Some(QueryCursor {
        fingerprint,
        after_id: after_id.to_owned(),
        after_index,
        snapshot,
    })
}

/// One page of an ordered query result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueryPage {
    /// Index of the first row of the page.
    pub start: usize,
    /// Index one past the last row of the page.
    pub end: usize,
    /// Whether rows follow the page.
    pub has_more: bool,
    /// The cursor of the next page, when `has_more`.
    pub next_cursor: Option<String>,
}

/// Pages `ids` (the ordered result) after `after` (the raw `--after` text) with at most
/// `limit` rows.
///
/// # Errors
/// `invalid_query_cursor` as [`QueryCursor::decode`] and [`QueryCursor::resume_index`].
pub fn paginate(
    ids: &[&str],
    after: Option<&str>,
    fingerprint: &str,
    limit: usize,
) -> Result<QueryPage> {
    let start = match after {
        Some(raw) => QueryCursor::decode(raw, fingerprint)?.resume_index(
            ids.iter().copied(),
            ids.len(),
            raw,
        )?,
        None => 0,
    };
    let end = start.saturating_add(limit).min(ids.len());
    let has_more = end > start && end < ids.len();
    let next_cursor = has_more.then(|| {
        QueryCursor {
            fingerprint: fingerprint.to_owned(),
            after_id: ids[end - 1].to_owned(),
            after_index: Some((end - 1) as u64),
            snapshot: None,
        }
        .encode()
    });
    Ok(QueryPage {
        start,
        end,
        has_more,
        next_cursor,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn message(r: Result<impl std::fmt::Debug>) -> String {
        r.err()
            .map(|e| format!("{}: {e}", e.code()))
            .unwrap_or_default()
    }

    #[test]
    fn fingerprint_is_24_hex_of_command_nul_stable_contract() {
        let a = query_fingerprint("list", &json!({"status": "open", "sort": null}));
        let b = query_fingerprint("list", &json!({"sort": null, "status": "open"}));
        assert_eq!(a, b);
        assert_eq!(a.len(), 24);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(
            a,
            query_fingerprint("search", &json!({"status": "open", "sort": null}))
        );
        let mut input = b"list\0".to_vec();
        input.extend_from_slice(br#"{"sort":null,"status":"open"}"#);
        assert_eq!(a, pm_engine::hash::sha256_hex(&input)[..24]);
    }

    #[test]
    fn encodes_pm_payload_order() {
        let c = QueryCursor {
            fingerprint: "f".repeat(24),
            after_id: "pm-a".into(),
            after_index: Some(1),
            snapshot: None,
        };
        let text = c.encode();
        let decoded = String::from_utf8(codec::base64url_decode_lenient(&text)).unwrap_or_default();
        assert_eq!(
            decoded,
            r#"{"version":1,"fingerprint":"ffffffffffffffffffffffff","after_id":"pm-a","after_index":1}"#
        );
        assert_eq!(
            QueryCursor::decode(&text, &"f".repeat(24)).ok(),
            Some(c.clone())
        );
        assert_eq!(QueryCursor::parse(&format!(" {text} ")), Some(c));
    }

    #[test]
    fn refusals_use_pm_messages() {
        let fp = "a".repeat(24);
        assert_eq!(
            message(QueryCursor::decode("not base64!", &fp)),
            "invalid_query_cursor: Query cursor is malformed."
        );
        assert_eq!(
            message(QueryCursor::decode("", &fp)),
            "invalid_query_cursor: Query cursor is malformed."
        );
        assert_eq!(
            message(QueryCursor::decode(&"A".repeat(4097), &fp)),
            "invalid_query_cursor: Query cursor is malformed."
        );
        assert_eq!(
            message(QueryCursor::decode("Zm9v", &fp)),
            "invalid_query_cursor: Query cursor is malformed."
        );
        let enc = |v: Value| codec::encode_json(&v);
        for payload in [
            json!({"version": 2, "fingerprint": fp, "after_id": "x"}),
            json!({"version": 1, "fingerprint": fp, "after_id": ""}),
            json!({"version": 1, "fingerprint": fp, "after_id": "x", "after_index": -1}),
            json!({"version": 1, "after_id": "x"}),
        ] {
            assert_eq!(
                message(QueryCursor::decode(&enc(payload), &fp)),
                "invalid_query_cursor: Query cursor version or payload is unsupported."
            );
        }
        let other = enc(json!({"version": 1, "fingerprint": "b".repeat(24), "after_id": "x"}));
        assert_eq!(
            message(QueryCursor::decode(&other, &fp)),
            format!(
                "invalid_query_cursor: Query cursor does not match the current filters, sort, or query ({} != {fp}).",
                "b".repeat(24)
            )
        );
        let gone = enc(json!({"version": 1, "fingerprint": fp, "after_id": "x"}));
        let cursor = QueryCursor::decode(&gone, &fp);
        assert!(cursor.is_ok());
        let resumed = cursor.and_then(|c| c.resume_index(["a", "b"], 2, &gone));
        assert_eq!(
            message(resumed),
            "invalid_query_cursor: Query cursor item x is no longer present in this result set."
        );
    }

    #[test]
    fn paging_walks_every_row_once() -> Result<()> {
        let ids = ["a", "b", "c", "d", "e"];
        let fp = "c".repeat(24);
        let mut after: Option<String> = None;
        let mut seen = Vec::new();
        loop {
            let page = paginate(&ids, after.as_deref(), &fp, 2)?;
            seen.extend_from_slice(&ids[page.start..page.end]);
            match page.next_cursor {
                Some(next) => after = Some(next),
                None => break,
            }
        }
        assert_eq!(seen, ids);
        // The cursor's row (b, index 1) vanished: resume at its recorded index, now "c".
        let page = paginate(&ids, None, &fp, 2)?;
        let cursor = page.next_cursor.unwrap_or_default();
        let shorter = ["a", "c", "d", "e"];
        let resumed = paginate(&shorter, Some(&cursor), &fp, 2)?;
        assert_eq!(resumed.start, 1);
        Ok(())
    }
}
