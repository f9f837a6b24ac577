//! Item file bytes ⇄ [`ItemDoc`]: conflict-marker detection, TOON (flat or legacy
//! `{front_matter, body}`) and Markdown parsing with read checks and canonicalization, and the
//! exact bytes pm writes. No file I/O here; callers read and write the bytes.

use super::canon::{self, CanonSchema, js};
use super::checks::{self, CheckFailure};
use super::front_matter;
use super::{ItemDoc, ItemFormat};
use crate::error::{Error, ItemInvalidKind, Result};
use crate::toon;
use serde_json::{Map, Value};
use std::path::Path;

/// Keys whose presence makes a flat TOON object look like an item document.
const ITEM_SHAPE_KEYS: &[&str] = &["id", "title", "description", "created_at", "updated_at"];

/// A git merge-conflict marker line found in a tracker file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConflictMarker {
    /// 1-based line number.
    pub line: usize,
    /// The marker: `<<<<<<<`, `=======` or `>>>>>>>`.
    pub marker: &'static str,
}

/// Returns the first line matching `^\s*(<<<<<<<|=======|>>>>>>>)(\s.*)?$` (JavaScript `\s`,
/// lines split on `\r?\n`), as pm's `findFirstMergeConflictMarker` does.
pub fn find_conflict_marker(text: &str) -> Option<ConflictMarker> {
    // Fast exit: almost every file has none of the three markers anywhere (one pass looking
    // for a run of seven `<`, `=` or `>`).
    let b = text.as_bytes();
    let has_run = memchr::memchr3_iter(b'<', b'=', b'>', b).any(|i| {
        b.get(i..i + 7)
            .is_some_and(|run| run.iter().all(|c| *c == b[i]))
    });
    if !has_run {
        return None;
    }
    for (i, raw) in text.split('\n').enumerate() {
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        let rest = js::trim_start(line);
        for marker in ["<<<<<<<", "=======", ">>>>>>>"] {
            let Some(tail) = rest.strip_prefix(marker) else {
                continue;
            };
            let mut chars = tail.chars();
            let matches = match chars.next() {
                None => true,
                Some(first) => {
                    js::is_js_whitespace(first)
                        && !chars.any(|c| matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}'))
                }
            };
            if matches {
                return Some(ConflictMarker {
                    line: i + 1,
                    marker,
                });
            }
        }
    }
    None
}

/// Parses an item file and returns what pm's `parseItemDocument` + `canonicalDocument`
/// produce: read checks, runtime-field coercion, then canonicalization under
/// `schema`. Invalid UTF-8 is replaced with U+FFFD, as Node's `readFile(…, "utf8")` does.
///
/// # Errors
/// [`Error::ConflictMarkers`] for unresolved merge markers; [`Error::ItemInvalid`] with
/// `syntax_error` for undecodable text or a non-item shape, and `missing_required_field`,
/// `schema_validation_error` or `unknown_status` for failed checks.
pub fn parse_item(
    bytes: &[u8],
    format: ItemFormat,
    path: &Path,
    schema: &CanonSchema,
) -> Result<ItemDoc> {
    let text = String::from_utf8_lossy(bytes);
    if let Some(marker) = find_conflict_marker(&text) {
        return Err(Error::ConflictMarkers {
            path: path.to_path_buf(),
            line: marker.line,
            history: false,
        });
    }
    let (mut metadata, body) = match format {
        ItemFormat::Toon => split_toon(&text, path)?,
        ItemFormat::Markdown => split_markdown(&text, path)?,
    };
    checks::check_metadata(&mut metadata, schema).map_err(|f| invalid_check(path, f))?;
    Ok(ItemDoc {
        metadata: canon::canonical_metadata(metadata, schema),
        body: canon::normalize_body(&body),
    })
}

/// Returns the bytes pm writes for `doc` in `format`: the document canonicalized (registry-free;
/// a no-op on parsed documents), metadata in `ITEM_METADATA_KEY_ORDER` with unknown keys
/// `localeCompare` sorted after it.
///
/// TOON: `encode({...metadata, body}) + "\n"`, refused unless decoding the text gives the
/// payload back (pm's round-trip guard). Markdown: `JSON.stringify(metadata, null, 2)`, then
/// `\n` for an empty body or `\n\n<body>\n`.
///
/// # Errors
/// [`Error::ItemRoundTrip`] when the TOON text does not decode back to the payload.
pub fn serialize_item(doc: &ItemDoc, format: ItemFormat) -> Result<Vec<u8>> {
    let canonical = canon::canonicalize_for_hash(doc);
    // Canonical metadata is already in write order (`ITEM_METADATA_KEY_ORDER`, then the other
    // keys `localeCompare` sorted): what pm's `orderObject` produces.
    let metadata = canonical.metadata;
    match format {
        ItemFormat::Toon => {
            let mut payload = metadata;
            payload.insert("body".into(), Value::String(canonical.body));
            let payload = Value::Object(payload);
            let mut text = toon::encode(&payload);
            check_round_trip(&text, &payload, doc)?;
            text.push('\n');
            Ok(text.into_bytes())
        }
        ItemFormat::Markdown => {
            let json = crate::json::to_pretty(&Value::Object(metadata));
            Ok(front_matter::compose(&json, &canonical.body).into_bytes())
        }
    }
}

fn check_round_trip(text: &str, payload: &Value, doc: &ItemDoc) -> Result<()> {
    let detail = match toon::decode(text) {
        Ok(decoded) if js::deep_equal(&decoded, payload) => return Ok(()),
        Ok(_) => "decoded TOON differs from the payload".to_string(),
        Err(e) => format!("encoded TOON does not decode: {e}"),
    };
    Err(Error::ItemRoundTrip {
        id: doc.id().unwrap_or_default().to_string(),
        detail,
    })
}

/// Decodes TOON text into `(metadata, raw body)`, accepting the flat item shape and the legacy
/// `{front_matter, body}` shape.
fn split_toon(text: &str, path: &Path) -> Result<(Map<String, Value>, String)> {
    let decoded = decode_toon_item(text)
        .map_err(|e| syntax(path, &format!("TOON item document is not valid TOON ({e})")))?;
    let Value::Object(mut record) = decoded else {
        return Err(syntax(path, "TOON item document must be an object"));
    };
    let body = match record.get_mut("body") {
        None => String::new(),
        Some(Value::String(b)) => std::mem::take(b),
        Some(_) => return Err(syntax(path, "TOON item document body must be a string")),
    };
    if let Some(front) = record.get_mut("front_matter") {
        return match front.take() {
            Value::Object(metadata) => Ok((metadata, body)),
            _ => Err(syntax(path, "front matter must be an object")),
        };
    }
    if !ITEM_SHAPE_KEYS.iter().any(|k| record.contains_key(*k)) {
        return Err(syntax(
            path,
            "TOON document does not have the shape of an item document",
        ));
    }
    record.shift_remove("body");
    Ok((record, body))
}

/// Decodes TOON like pm's `decodeToonItemContent`: strict decode, and on failure one retry with
/// `[` escaped as `\u005b` inside quoted scalar values (a workaround pm keeps for an old
/// decoder bug; the retry never relaxes strictness).
fn decode_toon_item(text: &str) -> std::result::Result<Value, toon::ToonError> {
    match toon::decode(text) {
        Ok(v) => Ok(v),
        Err(strict) => {
            let escaped = escape_brackets_in_quoted_scalars(text);
            if escaped == text {
                return Err(strict);
            }
            toon::decode(&escaped)
        }
    }
}

fn escape_brackets_in_quoted_scalars(text: &str) -> String {
    let lines: Vec<String> = text
        .split('\n')
        .map(|line| {
            let (Some(sep), Some(bracket)) = (line.find(": "), line.find('[')) else {
                return line.to_string();
            };
            let value = &line[sep + 2..];
            if bracket < sep || !value.starts_with('"') {
                return line.to_string();
            }
            format!("{}{}", &line[..sep + 2], value.replace('[', "\\u005b"))
        })
        .collect();
    lines.join("\n")
}

/// Splits a Markdown item into `(metadata, raw body)`.
fn split_markdown(text: &str, path: &Path) -> Result<(Map<String, Value>, String)> {
    let parts = front_matter::split(text).map_err(|e| syntax(path, e.message()))?;
    let mut parsed: Value = serde_json::from_str(parts.front_matter)
        .map_err(|_| syntax(path, "JSON front matter is not valid JSON"))?;
    js::normalize_numbers(&mut parsed);
    match parsed {
        Value::Object(metadata) => Ok((metadata, parts.body.to_string())),
        _ => Err(syntax(path, "front matter must be an object")),
    }
}

fn syntax(path: &Path, detail: &str) -> Error {
    invalid_check(
        path,
        CheckFailure {
            kind: ItemInvalidKind::Syntax,
            detail: detail.to_string(),
        },
    )
}

fn invalid_check(path: &Path, failure: CheckFailure) -> Error {
    Error::ItemInvalid {
        path: path.to_path_buf(),
        kind: failure.kind,
        detail: format!("Invalid item front matter: {}", failure.detail),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{StatusRegistry, Workflow, normalize_status_definitions};
    use serde_json::json;

    const T73K: &str = "id: pm-t73k\ntitle: Fix inaccurate PR CI matrix description in CONTRIBUTING.md\ndescription: \"CONTRIBUTING claimed PRs run a reduced free-tier matrix (ubuntu+macos Node 20), but ci.yml pull_request has no reduction: PRs run the full ubuntu 20/22/24 + macos 20 matrix. Corrected the doc to match the workflow. Found by docs/CI audit.\"\ntype: Chore\nstatus: closed\npriority: 3\ntags[2]: \"area:ci\",\"area:docs\"\ncreated_at: \"2026-06-07T17:03:26.095Z\"\nupdated_at: \"2026-07-26T17:26:09.183Z\"\nauthor: maintainer-agent\nparent: pm-u9d0\nrelease: v2026.6.8\ndependencies[1]{id,kind,created_at,author,source_kind}:\n  pm-u9d0,implements,\"2026-07-26T17:26:08.938Z\",null,null\nclose_reason: \"Shipped: CONTRIBUTING PR-matrix description corrected to match ci.yml (full matrix on PRs).\"\nbody: \"\"\n";

    fn path() -> &'static Path {
        Path::new("chores/pm-t73k.toon")
    }

    fn parse(text: &str, format: ItemFormat) -> Result<ItemDoc> {
        parse_item(text.as_bytes(), format, path(), &CanonSchema::NONE)
    }

    fn kind(result: Result<ItemDoc>) -> Option<ItemInvalidKind> {
        match result {
            Err(Error::ItemInvalid { kind, .. }) => Some(kind),
            _ => None,
        }
    }

    fn minimal() -> String {
        "id: pm-a1\ntitle: T\ndescription: \"\"\ntype: Task\nstatus: open\npriority: 2\ntags: []\ncreated_at: \"2026-01-01T00:00:00.000Z\"\nupdated_at: \"2026-01-01T00:00:00.000Z\"\nbody: \"\"\n".to_string()
    }

    #[test]
    fn a_real_item_is_rewritten_like_pm() -> Result<()> {
        let doc = parse(T73K, ItemFormat::Toon)?;
        let expected = T73K.replace(
            "dependencies[1]{id,kind,created_at,author,source_kind}:\n  pm-u9d0,implements,\"2026-07-26T17:26:08.938Z\",null,null",
            "dependencies[1]{id,kind,created_at}:\n  pm-u9d0,implements,\"2026-07-26T17:26:08.938Z\"",
        );
        assert_eq!(
            String::from_utf8_lossy(&serialize_item(&doc, ItemFormat::Toon)?),
            expected
        );
        Ok(())
    }

    #[test]
    fn conflict_markers_are_refused() {
        let text = format!("{}<<<<<<< HEAD\n", minimal());
        match parse(&text, ItemFormat::Toon) {
            Err(Error::ConflictMarkers {
                line,
                history: false,
                ..
            }) => assert_eq!(line, 11),
            other => panic!("expected conflict markers, got {other:?}"),
        }
        assert_eq!(
            find_conflict_marker("a\n  ======= x\r\nb").map(|m| m.line),
            Some(2)
        );
        assert_eq!(
            find_conflict_marker("\u{FEFF}>>>>>>>").map(|m| m.marker),
            Some(">>>>>>>")
        );
        assert_eq!(find_conflict_marker("=======x"), None);
        assert_eq!(find_conflict_marker("========"), None);
        assert_eq!(find_conflict_marker("a: =======\n- ======="), None);
    }

    #[test]
    fn truncated_toon_is_a_syntax_error() {
        let text = "id: pm-a1\ntags[3]: a,b\n";
        assert_eq!(
            kind(parse(text, ItemFormat::Toon)),
            Some(ItemInvalidKind::Syntax)
        );
        let text = "id: \"pm-a1\ntitle: T\n";
        assert_eq!(
            kind(parse(text, ItemFormat::Toon)),
            Some(ItemInvalidKind::Syntax)
        );
        assert_eq!(
            kind(parse("x: 1\nbody: \"\"\n", ItemFormat::Toon)),
            Some(ItemInvalidKind::Syntax)
        );
        assert_eq!(
            kind(parse("- 1\n", ItemFormat::Toon)),
            Some(ItemInvalidKind::Syntax)
        );
    }

    #[test]
    fn read_checks_fail_the_parse() {
        let missing = minimal().replace("title: T\n", "");
        assert_eq!(
            kind(parse(&missing, ItemFormat::Toon)),
            Some(ItemInvalidKind::MissingRequiredField)
        );
        let high = minimal().replace("priority: 2", "priority: 5");
        match parse(&high, ItemFormat::Toon) {
            Err(Error::ItemInvalid { kind, detail, .. }) => {
                assert_eq!(kind, ItemInvalidKind::Schema);
                assert_eq!(
                    detail,
                    "Invalid item front matter: priority must be an integer 0..4"
                );
            }
            other => panic!("expected a schema error, got {other:?}"),
        }
        let body = minimal().replace("body: \"\"", "body: 5");
        assert_eq!(
            kind(parse(&body, ItemFormat::Toon)),
            Some(ItemInvalidKind::Syntax)
        );
    }

    #[test]
    fn unknown_status_is_refused_with_a_registry() -> Result<()> {
        let registry = StatusRegistry::new(
            normalize_status_definitions(&[json!({"id": "review", "aliases": ["in-review"]})]),
            Workflow::default(),
        );
        let schema = CanonSchema {
            statuses: Some(&registry),
            ..CanonSchema::NONE
        };
        let review = minimal().replace("status: open", "status: In-Review");
        let doc = parse_item(review.as_bytes(), ItemFormat::Toon, path(), &schema)?;
        assert_eq!(doc.str_field("status"), Some("review"));
        let later = minimal().replace("status: open", "status: later");
        let r = parse_item(later.as_bytes(), ItemFormat::Toon, path(), &schema);
        assert_eq!(kind(r), Some(ItemInvalidKind::UnknownStatus));
        assert_eq!(
            kind(parse(&review, ItemFormat::Toon)),
            Some(ItemInvalidKind::UnknownStatus)
        );
        Ok(())
    }

    #[test]
    fn bom_and_crlf_are_tolerated() -> Result<()> {
        let plain = parse(&minimal(), ItemFormat::Toon)?;
        let windows = format!("\u{FEFF}{}", minimal().replace('\n', "\r\n"));
        assert_eq!(parse(&windows, ItemFormat::Toon)?, plain);
        Ok(())
    }

    #[test]
    fn legacy_front_matter_shape_is_read() -> Result<()> {
        let legacy = "front_matter:\n  id: pm-a1\n  title: T\n  description: \"\"\n  type: Task\n  status: open\n  priority: 2\n  tags[0]:\n  created_at: \"2026-01-01T00:00:00.000Z\"\n  updated_at: \"2026-01-01T00:00:00.000Z\"\nbody: \"\\nHello  \"\n";
        let doc = parse(legacy, ItemFormat::Toon)?;
        assert_eq!(doc.body, "Hello");
        assert_eq!(doc.metadata, parse(&minimal(), ItemFormat::Toon)?.metadata);
        Ok(())
    }

    #[test]
    fn format_version_two_is_kept_one_is_dropped() -> Result<()> {
        let v2 = minimal().replace("type: Task\n", "type: Task\npm_format_version: 2\n");
        let doc = parse(&v2, ItemFormat::Toon)?;
        assert_eq!(doc.metadata.get("pm_format_version"), Some(&json!(2)));
        assert_eq!(
            String::from_utf8_lossy(&serialize_item(&doc, ItemFormat::Toon)?),
            v2
        );
        let v1 = minimal().replace("type: Task\n", "type: Task\npm_format_version: 1\n");
        let doc = parse(&v1, ItemFormat::Toon)?;
        assert!(doc.metadata.get("pm_format_version").is_none());
        assert_eq!(
            String::from_utf8_lossy(&serialize_item(&doc, ItemFormat::Toon)?),
            minimal()
        );
        Ok(())
    }

    #[test]
    fn markdown_with_a_yaml_preamble_is_read() -> Result<()> {
        let md = "---\ntitle: ignored\n---\n{\n  \"id\": \"pm-a1\", \"title\": \"T\", \"description\": \"\", \"type\": \"Task\",\n  \"status\": \"open\", \"priority\": 2.0, \"tags\": [\"B\", \"a\"],\n  \"created_at\": \"2026-01-01T00:00:00.000Z\", \"updated_at\": \"2026-01-01T00:00:00.000Z\"\n}\n\n# Heading\n\ntext\n";
        let doc = parse(md, ItemFormat::Markdown)?;
        assert_eq!(doc.body, "# Heading\n\ntext");
        assert_eq!(doc.metadata.get("priority"), Some(&json!(2)));
        assert_eq!(doc.metadata.get("tags"), Some(&json!(["a", "b"])));
        let written =
            String::from_utf8_lossy(&serialize_item(&doc, ItemFormat::Markdown)?).into_owned();
        assert_eq!(
            written,
            "{\n  \"id\": \"pm-a1\",\n  \"title\": \"T\",\n  \"description\": \"\",\n  \"type\": \"Task\",\n  \"status\": \"open\",\n  \"priority\": 2,\n  \"tags\": [\n    \"a\",\n    \"b\"\n  ],\n  \"created_at\": \"2026-01-01T00:00:00.000Z\",\n  \"updated_at\": \"2026-01-01T00:00:00.000Z\"\n}\n\n# Heading\n\ntext\n"
        );
        assert_eq!(parse(&written, ItemFormat::Markdown)?, doc);
        Ok(())
    }

    #[test]
    fn markdown_errors_and_crlf() -> Result<()> {
        assert_eq!(
            kind(parse("# no front matter\n", ItemFormat::Markdown)),
            Some(ItemInvalidKind::Syntax)
        );
        assert_eq!(
            kind(parse("{\"id\": }\n", ItemFormat::Markdown)),
            Some(ItemInvalidKind::Syntax)
        );
        let md = "\u{FEFF}{\"id\":\"pm-a1\",\"title\":\"T\",\"description\":\"\",\"type\":\"Task\",\"status\":\"open\",\"priority\":2,\"tags\":[],\"created_at\":\"2026-01-01T00:00:00.000Z\",\"updated_at\":\"2026-01-01T00:00:00.000Z\"}\r\n\r\nBody\r\n";
        let doc = parse(md, ItemFormat::Markdown)?;
        assert_eq!(doc.body, "\r\nBody");
        let empty = serialize_item(
            &ItemDoc {
                body: String::new(),
                ..doc
            },
            ItemFormat::Markdown,
        )?;
        assert!(empty.ends_with(b"}\n"));
        Ok(())
    }

    #[test]
    fn toon_and_markdown_carry_the_same_document() -> Result<()> {
        let doc = parse(T73K, ItemFormat::Toon)?;
        let md = serialize_item(&doc, ItemFormat::Markdown)?;
        let back = parse_item(&md, ItemFormat::Markdown, path(), &CanonSchema::NONE)?;
        assert_eq!(back, doc);
        assert_eq!(
            crate::hash::item_hash(&back, crate::hash::HashEpoch::V2),
            crate::hash::item_hash(&doc, crate::hash::HashEpoch::V2)
        );
        Ok(())
    }
}
