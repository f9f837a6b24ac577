//! Search result rows: the compact, full and `--fields` projections of scored hits and the
//! projection echo of verbose responses.

use crate::failure::Result;
use pm_engine::Error;
use pm_engine::item::ItemDoc;
use pm_engine::item::keys::ITEM_METADATA_KEY_ORDER;
use pm_engine::rank::search::SearchScore;
use serde_json::{Map, Value, json};

/// The fields of a compact row, in order.
pub const COMPACT_FIELDS: [&str; 8] = [
    "id",
    "title",
    "status",
    "type",
    "priority",
    "updated_at",
    "score",
    "matched_fields",
];

/// How hits become rows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Projection {
    /// [`COMPACT_FIELDS`] (the default).
    Compact,
    /// `{item, score, matched_fields}`.
    Full,
    /// The named fields.
    Fields(Vec<String>),
}

impl Projection {
    /// Resolves `--compact`, `--full` and `--fields` (clap already refuses combinations); the
    /// default is compact.
    ///
    /// # Errors
    /// `invalid_argument_value` for an empty or unknown `--fields` list.
    pub fn resolve(
        compact: bool,
        full: bool,
        fields: Option<&str>,
        query: &str,
    ) -> Result<Projection> {
        if full {
            return Ok(Projection::Full);
        }
        let Some(raw) = fields.filter(|_| !compact) else {
            return Ok(Projection::Compact);
        };
        let mut selected: Vec<String> = Vec::new();
        for f in raw.split(',').map(str::trim).filter(|f| !f.is_empty()) {
            if !selected.iter().any(|s| s == f) {
                selected.push(f.to_owned());
            }
        }
        if selected.is_empty() {
            return Err(Error::InvalidArgument {
                field: "--fields".into(),
                value: raw.into(),
                reason: "Search --fields requires a comma-separated list of field names".into(),
                allowed: Vec::new(),
            }
            .into());
        }
        let allowed = allowed_fields();
        let unknown: Vec<&String> = selected.iter().filter(|f| !allowed.contains(f)).collect();
        if !unknown.is_empty() {
            let names: Vec<&str> = unknown.iter().map(|s| s.as_str()).collect();
            return Err(Error::InvalidArgument {
                field: "--fields".into(),
                value: raw.into(),
                reason: format!(
                    "Unknown search --fields value(s): {} (query {query:?})",
                    names.join(", ")
                ),
                allowed,
            }
            .into());
        }
        Ok(Projection::Fields(selected))
    }

    /// Returns true for the compact projection (pm's compact envelope).
    pub fn is_compact(&self) -> bool {
        *self == Projection::Compact
    }

    /// Returns the `projection` echo of verbose responses.
    pub fn echo(&self) -> Value {
        match self {
            Projection::Compact => json!({"mode": "compact", "fields": COMPACT_FIELDS}),
            Projection::Full => json!({"mode": "full", "fields": null}),
            Projection::Fields(f) => json!({"mode": "fields", "fields": f}),
        }
    }
}

/// Returns every legal `--fields` value: item keys, `item.<key>`, `score`, `matched_fields`.
fn allowed_fields() -> Vec<String> {
    let mut out: Vec<String> = ITEM_METADATA_KEY_ORDER
        .iter()
        .map(|k| (*k).to_owned())
        .collect();
    out.extend(ITEM_METADATA_KEY_ORDER.iter().map(|k| format!("item.{k}")));
    out.push("score".into());
    out.push("matched_fields".into());
    out
}

fn score_value(score: f64) -> Value {
    pm_engine::json::number_from_f64(score).map_or(Value::Null, Value::Number)
}

fn field_value(hit: &SearchScore, doc: &ItemDoc, field: &str) -> Value {
    match field {
        "score" => score_value(hit.score),
        "matched_fields" => json!(hit.matched.names()),
        _ => {
            let key = field.strip_prefix("item.").unwrap_or(field);
            doc.metadata.get(key).cloned().unwrap_or(Value::Null)
        }
    }
}

/// Projects scored hits and their documents into rows.
pub fn project_rows(
    hits: impl Iterator<Item = (SearchScore, ItemDoc)>,
    projection: &Projection,
) -> Vec<Value> {
    hits.map(|(hit, doc)| match projection {
        Projection::Full => {
            let mut row = Map::new();
            row.insert("item".into(), Value::Object(doc.metadata));
            row.insert("score".into(), score_value(hit.score));
            row.insert("matched_fields".into(), json!(hit.matched.names()));
            Value::Object(row)
        }
        Projection::Compact => {
            let mut row = Map::new();
            for f in COMPACT_FIELDS {
                row.insert(f.into(), field_value(&hit, &doc, f));
            }
            Value::Object(row)
        }
        Projection::Fields(fields) => {
            let mut row = Map::new();
            for f in fields {
                row.insert(f.clone(), field_value(&hit, &doc, f));
            }
            Value::Object(row)
        }
    })
    .collect()
}
