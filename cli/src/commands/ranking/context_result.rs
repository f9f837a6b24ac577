//! The typed result of `pm context`: the envelope keys in printed order, its focus rows with
//! their open blockers, the summary, window and filter echo.

use pm_engine::rank::item::{RankItem, RankRelations};
use pm_engine::rank::next::Hierarchy;
use pm_engine::schema::RuntimeSchema;
use serde::Serialize;
use serde_json::{Map, Value};

use super::rank_rows::{Details, Explain, focus_row};
use crate::read_output::envelope::{Paging, Stamp};

/// The `pm context` envelope; `sections` holds the optional sections under their own names.
#[derive(Debug, Serialize)]
pub struct ContextResult<'a> {
    #[serde(flatten)]
    pub stamp: Stamp,
    pub depth: &'static str,
    pub sections_included: &'a [&'static str],
    pub window: Window<'a>,
    pub filters: ContextFilters,
    pub summary: ContextSummary,
    pub high_level: Vec<ContextRow>,
    pub low_level: Vec<ContextRow>,
    pub blocked_fallback: Vec<ContextRow>,
    pub agenda: Value,
    #[serde(flatten)]
    pub paging: Paging,
    #[serde(flatten)]
    pub sections: Map<String, Value>,
    #[serde(flatten)]
    pub explain: Option<Explain>,
}

/// The read's time window: anchored and starting at now, open-ended.
#[derive(Debug, Serialize)]
pub struct Window<'a> {
    anchor: &'a str,
    start: &'a str,
    end: Option<&'a str>,
    past: bool,
    from: Option<&'a str>,
    to: Option<&'a str>,
}

impl<'a> Window<'a> {
    /// The window from `now` on.
    pub fn from_now(now: &'a str) -> Self {
        Self {
            anchor: now,
            start: now,
            end: None,
            past: false,
            from: None,
            to: None,
        }
    }
}

/// The filter echo: the selectors (with `limit`), the budget and no runtime filters.
#[derive(Debug, Serialize)]
pub struct ContextFilters {
    #[serde(flatten)]
    pub selectors: Map<String, Value>,
    pub token_budget: u64,
    pub runtime_filters: Map<String, Value>,
}

/// Counts of the focus page.
#[derive(Debug, Serialize)]
pub struct ContextSummary {
    pub active_items: usize,
    pub in_progress: usize,
    pub open: usize,
    pub blocked: usize,
    pub blocked_fallback_used: bool,
    pub high_level: usize,
    pub low_level: usize,
    pub agenda_events: usize,
}

/// A focus row, marked with its open blockers when it has any.
#[derive(Debug, Serialize)]
pub struct ContextRow {
    #[serde(flatten)]
    focus: Map<String, Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    blocked: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    blocker_ids: Option<Vec<String>>,
}

/// Builds focus rows (without child rollups) for the shown items of a corpus.
pub struct RowBuilder<'a, 'd> {
    details: &'d Details,
    relations: RankRelations<'a>,
    resolved: pm_engine::rank::item::Resolved<'a>,
    schema: &'d RuntimeSchema,
}

impl<'a, 'd> RowBuilder<'a, 'd> {
    /// A builder resolving the blockers of every `shown` item of `corpus`.
    pub fn new(
        corpus: &'a [RankItem],
        shown: &[&RankItem],
        details: &'d Details,
        schema: &'d RuntimeSchema,
    ) -> Self {
        let relations = RankRelations::new(corpus);
        let wanted: std::collections::BTreeSet<&str> =
            shown.iter().flat_map(|s| relations.blockers(s)).collect();
        let resolved = relations.resolve(&wanted);
        Self {
            details,
            relations,
            resolved,
            schema,
        }
    }

    /// The rows of `items` that have details.
    pub fn rows(&self, items: &[&RankItem]) -> Vec<ContextRow> {
        let no_rollup = Hierarchy::default();
        let row = |s: &&RankItem| {
            let focus = focus_row(self.details.get(s)?, &no_rollup, self.schema);
            let open: Vec<String> = (self.relations.blockers(s).into_iter())
                .filter(|b| !self.resolved.is_terminal_id(b))
                .map(str::to_owned)
                .collect();
            let blocked = !open.is_empty();
            Some(ContextRow {
                focus,
                blocked: blocked.then_some(true),
                blocker_ids: blocked.then_some(open),
            })
        };
        items.iter().filter_map(row).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read_output::envelope::More;

    #[test]
    fn envelope_keys_keep_the_printed_order() {
        let mut sections = Map::new();
        sections.insert("hierarchy".into(), Value::Null);
        let row = ContextRow {
            focus: Map::new(),
            blocked: Some(true),
            blocker_ids: Some(vec!["b".into()]),
        };
        let result = ContextResult {
            stamp: Stamp::toon("n".into()),
            depth: "brief",
            sections_included: &[],
            window: Window::from_now("n"),
            filters: ContextFilters {
                selectors: Map::new(),
                token_budget: 256,
                runtime_filters: Map::new(),
            },
            summary: ContextSummary {
                active_items: 1,
                in_progress: 0,
                open: 1,
                blocked: 0,
                blocked_fallback_used: false,
                high_level: 0,
                low_level: 1,
                agenda_events: 0,
            },
            high_level: Vec::new(),
            low_level: vec![row],
            blocked_fallback: Vec::new(),
            agenda: Value::Null,
            paging: Paging {
                applied_limit: Some(1),
                more: More::new(true),
                next_cursor: None,
            },
            sections,
            explain: None,
        };
        assert_eq!(
            serde_json::to_string(&result).unwrap_or_default(),
            concat!(
                r#"{"output_default":"toon","now":"n","depth":"brief","sections_included":[],"#,
                r#""window":{"anchor":"n","start":"n","end":null,"past":false,"from":null,"#,
                r#""to":null},"filters":{"token_budget":256,"runtime_filters":{}},"#,
                r#""summary":{"active_items":1,"in_progress":0,"open":1,"blocked":0,"#,
                r#""blocked_fallback_used":false,"high_level":0,"low_level":1,"agenda_events":0},"#,
                r#""high_level":[],"low_level":[{"blocked":true,"blocker_ids":["b"]}],"#,
                r#""blocked_fallback":[],"agenda":null,"applied_limit":1,"has_more":true,"#,
                r#""truncated":true,"hierarchy":null}"#
            )
        );
    }
}
