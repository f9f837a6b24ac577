//! The searchable text of an item for keyword search: which metadata each of the twelve
//! document fields reads, lowercased once. The only definition of that extraction: the scan
//! path derives it from parsed documents, the index stores exactly this value.

use serde_json::{Map, Value};

use crate::item::ItemDoc;
use crate::item::canon::js;

/// The number of document fields (every searchable field but `linked_content`).
pub const FIELD_COUNT: usize = 12;

/// The document fields in pm's scoring order; `plan` uses the body weight.
pub const FIELD_NAMES: [&str; FIELD_COUNT] = [
    "title",
    "description",
    "tags",
    "status",
    "body",
    "comments",
    "notes",
    "learnings",
    "reminders",
    "events",
    "dependencies",
    "plan",
];

/// The position of `title` in [`FIELD_NAMES`].
pub const TITLE: usize = 0;

/// What search reads of one item: the normalised id and the lowercased text of each field.
///
/// Texts are `js::lowercase` of pm's field text; everything scoring derives (substring counts,
/// title tokens, whitespace-normalised phrases) is a function of the lowercased text, so the
/// stored form scores exactly like a freshly parsed document.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SearchText {
    /// `normalize_phrase(id)`: what exact-id matches compare with.
    pub id: String,
    /// Lowercased field texts, in [`FIELD_NAMES`] order.
    pub fields: [String; FIELD_COUNT],
}

impl SearchText {
    /// Returns the searchable text of `doc`.
    pub fn of(doc: &ItemDoc) -> SearchText {
        SearchText {
            id: super::normalize_phrase(str_of(&doc.metadata, "id")),
            fields: field_texts(doc).map(|text| js::lowercase(&text)),
        }
    }

    /// Returns the borrowed view that scoring reads.
    pub fn view(&self) -> TextView<'_> {
        TextView {
            id: &self.id,
            fields: std::array::from_fn(|i| self.fields[i].as_str()),
        }
    }
}

/// A [`SearchText`] borrowed, from a document's extraction or straight from a stored row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TextView<'a> {
    /// `normalize_phrase(id)`.
    pub id: &'a str,
    /// Lowercased field texts, in [`FIELD_NAMES`] order.
    pub fields: [&'a str; FIELD_COUNT],
}

impl<'a> TextView<'a> {
    /// Returns the lowercased title.
    pub fn title(&self) -> &'a str {
        self.fields[TITLE]
    }

    /// Returns the owned text.
    pub fn to_text(&self) -> SearchText {
        SearchText {
            id: self.id.to_owned(),
            fields: self.fields.map(str::to_owned),
        }
    }
}

/// Returns pm's text of each document field of `doc`, in [`FIELD_NAMES`] order, as written
/// (before lowercasing): what scoring lowercases and what highlights quote.
pub fn field_texts(doc: &ItemDoc) -> [String; FIELD_COUNT] {
    let m = &doc.metadata;
    [
        str_of(m, "title").to_owned(),
        str_of(m, "description").to_owned(),
        tag_text(m),
        str_of(m, "status").to_owned(),
        doc.body.clone(),
        texts(m, "comments"),
        texts(m, "notes"),
        texts(m, "learnings"),
        reminder_text(m),
        event_text(m),
        dependency_text(m),
        plan_text(m),
    ]
}

fn str_of<'a>(meta: &'a Map<String, Value>, key: &str) -> &'a str {
    meta.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn texts(meta: &Map<String, Value>, key: &str) -> String {
    let Some(Value::Array(rows)) = meta.get(key) else {
        return String::new();
    };
    rows.iter()
        .filter_map(|r| r.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `String(value).trim()` of scalar parts, empties dropped, joined with spaces.
fn compact_parts(parts: &[Option<&Value>]) -> String {
    parts
        .iter()
        .filter_map(|p| match p {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.trim().to_owned()),
            Some(Value::Number(n)) => Some(crate::json::format_number(n)),
            Some(Value::Bool(b)) => Some(b.to_string()),
            Some(other) => Some(crate::json::to_compact(other)),
        })
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

fn joined_list(value: Option<&Value>) -> Option<Value> {
    let rows = value?.as_array()?;
    let parts: Vec<String> = rows
        .iter()
        .map(|v| match v {
            Value::String(s) => s.clone(),
            Value::Number(n) => crate::json::format_number(n),
            other => crate::json::to_compact(other),
        })
        .collect();
    Some(Value::String(parts.join(" ")))
}

fn reminder_text(meta: &Map<String, Value>) -> String {
    let Some(Value::Array(rows)) = meta.get("reminders") else {
        return String::new();
    };
    rows.iter()
        .map(|r| compact_parts(&[r.get("at"), r.get("text")]))
        .collect::<Vec<_>>()
        .join(" ")
}

fn event_text(meta: &Map<String, Value>) -> String {
    let Some(Value::Array(rows)) = meta.get("events") else {
        return String::new();
    };
    rows.iter()
        .map(|e| {
            let all_day = (e.get("all_day") == Some(&Value::Bool(true)))
                .then(|| Value::String("all day".into()));
            let rec = e.get("recurrence");
            let r = |k: &str| rec.and_then(|r| r.get(k));
            let weekday = joined_list(r("by_weekday"));
            let month_day = joined_list(r("by_month_day"));
            let exdates = joined_list(r("exdates"));
            compact_parts(&[
                e.get("start_at"),
                e.get("end_at"),
                e.get("title"),
                e.get("description"),
                e.get("location"),
                all_day.as_ref(),
                e.get("timezone"),
                r("freq"),
                r("interval"),
                r("count"),
                r("until"),
                weekday.as_ref(),
                month_day.as_ref(),
                exdates.as_ref(),
            ])
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn plan_text(meta: &Map<String, Value>) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut push = |v: Option<&Value>| {
        if let Some(s) = v.and_then(Value::as_str).filter(|s| !s.is_empty()) {
            parts.push(s.to_owned());
        }
    };
    for key in [
        "plan_mode",
        "plan_scope",
        "plan_harness",
        "plan_resume_context",
    ] {
        push(meta.get(key));
    }
    let rows = |key: &str| -> Vec<Value> {
        meta.get(key)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    for step in rows("plan_steps") {
        for key in [
            "title",
            "body",
            "status",
            "owner",
            "evidence",
            "blocked_reason",
            "superseded_by",
        ] {
            push(step.get(key));
        }
        let list = |k: &str| step.get(k).and_then(Value::as_array).cloned();
        for link in list("linked_items").unwrap_or_default() {
            let kind = link
                .get("kind")
                .and_then(Value::as_str)
                .unwrap_or("undefined");
            let id = link
                .get("id")
                .and_then(Value::as_str)
                .unwrap_or("undefined");
            push(Some(&Value::String(format!("{kind} {id}"))));
            push(link.get("note"));
        }
        for file in list("files").unwrap_or_default() {
            push(file.get("path"));
            push(file.get("note"));
        }
        for test in list("tests").unwrap_or_default() {
            push(test.get("command"));
            push(test.get("path"));
            push(test.get("note"));
        }
        for doc in list("docs").unwrap_or_default() {
            push(doc.get("path"));
            push(doc.get("note"));
        }
    }
    for d in rows("plan_decisions") {
        push(d.get("decision"));
        push(d.get("rationale"));
        push(d.get("evidence"));
    }
    for d in rows("plan_discoveries") {
        push(d.get("text"));
    }
    for c in rows("plan_validation") {
        push(c.get("text"));
        push(c.get("command"));
        push(c.get("expected"));
    }
    parts.join(" ")
}

fn dependency_text(meta: &Map<String, Value>) -> String {
    let Some(Value::Array(rows)) = meta.get("dependencies") else {
        return String::new();
    };
    rows.iter()
        .filter_map(|d| {
            let id = d.get("id")?.as_str()?;
            let kind = d.get("kind")?.as_str()?;
            Some(format!("{id} {kind}"))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn tag_text(meta: &Map<String, Value>) -> String {
    meta.get("tags")
        .and_then(Value::as_array)
        .map(|tags| {
            tags.iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fields_are_extracted_and_lowercased() {
        let doc = ItemDoc {
            metadata: json!({
                "id": "PM-A1", "title": "Ünicode TITLE", "tags": ["Api", 3, "DB"],
                "status": "Open", "comments": [{"text": "C1"}, {"x": 1}, {"text": "C2"}],
                "reminders": [{"at": " 2026-01-01 ", "text": "Ping"}],
                "events": [{"title": "Standup", "all_day": true,
                            "recurrence": {"freq": "WEEKLY", "by_weekday": ["MO", 2]}}],
                "dependencies": [{"id": "pm-b", "kind": "blocks"}, {"id": "pm-c"}],
                "plan_mode": "Deep",
                "plan_steps": [{"title": "Step", "linked_items": [{"id": "pm-x"}]}]
            })
            .as_object()
            .cloned()
            .unwrap_or_default(),
            body: "Body  TEXT".into(),
        };
        let t = SearchText::of(&doc);
        assert_eq!(t.id, "pm-a1");
        let expected = [
            "ünicode title",
            "",
            "api db",
            "open",
            "body  text",
            "c1 c2",
            "",
            "",
            "2026-01-01 ping",
            "standup all day weekly mo 2",
            "pm-b blocks",
            "deep step undefined pm-x",
        ];
        assert_eq!(t.fields, expected.map(str::to_owned));
    }
}
