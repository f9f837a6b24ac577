//! The `filters` echo of `pm search` (pm's compact and verbose shapes, around the one filter
//! echo of `list_filters.rs`) and the options its cursor fingerprint is bound to.

use pm_engine::rank::search::MatchMode;
use serde_json::{Map, Value, json};

use super::search::SearchArgs;
use crate::args::numbers::NumberFlag;
use crate::commands::filters::list_filters::{EchoStyle, Filters, StatusArgs};

/// What a search was asked: its filters (after inline tokens) and its own options.
pub(super) struct SearchEcho<'a> {
    /// `--status` (and an inline `status:` token).
    pub status: &'a StatusArgs,
    /// The other filters.
    pub filters: Filters<'a>,
    /// The command's arguments.
    pub args: &'a SearchArgs,
    /// The resolved match mode.
    pub match_mode: MatchMode,
    /// The resolved score threshold.
    pub threshold: f64,
}

fn number(v: f64) -> Value {
    pm_engine::json::number_from_f64(v).map_or(Value::Null, Value::Number)
}

impl SearchEcho<'_> {
    /// The options that change which hits a query returns, for its cursor fingerprint: the
    /// compact echo without `limit`.
    pub fn semantic_options(&self) -> Value {
        let mut m = self.compact();
        m.shift_remove("limit");
        Value::Object(m)
    }

    /// The filter echo of compact rows ([`Self::compact`]) or of the others ([`Self::verbose`]).
    pub fn for_rows(&self, compact: bool) -> Map<String, Value> {
        if compact {
            self.compact()
        } else {
            self.verbose()
        }
    }

    /// pm's compact echo: only the options that were given.
    pub fn compact(&self) -> Map<String, Value> {
        let args = self.args;
        let mut m = Map::new();
        if let Some(s) = self.status.echo() {
            m.insert("status".into(), s);
        }
        m.extend(self.filters.echo_values(EchoStyle::GivenJoined));
        m.extend(self.filters.echo_switches());
        if self.match_mode != MatchMode::Or {
            m.insert("match_mode".into(), json!(self.match_mode.as_str()));
        }
        if args.title_exact {
            m.insert("title_exact".into(), json!(true));
        }
        if args.phrase_exact {
            m.insert("phrase_exact".into(), json!(true));
        }
        if self.threshold > 0.0 {
            m.insert("score_threshold".into(), number(self.threshold));
        }
        if let Some(limit) = args.limit.raw() {
            m.insert("limit".into(), json!(limit));
        }
        m
    }

    /// pm's verbose echo (full and fields projections): every key, `null` when unset.
    pub fn verbose(&self) -> Map<String, Value> {
        let args = self.args;
        let mut m = Map::new();
        m.insert("mode".into(), json!("keyword"));
        m.insert("match_mode".into(), json!(self.match_mode.as_str()));
        let status = self.status.echo().unwrap_or(json!("all"));
        m.insert("status".into(), status);
        let mut values = self.filters.echo_values(EchoStyle::Every);
        // pm's search has no --assignee-filter, so its verbose echo has no such key.
        if values.get("assignee_filter") == Some(&Value::Null) {
            values.shift_remove("assignee_filter");
        }
        m.extend(values);
        m.extend(self.filters.echo_switches());
        m.insert("include_linked".into(), json!(false));
        m.insert("title_exact".into(), json!(args.title_exact));
        m.insert("phrase_exact".into(), json!(args.phrase_exact));
        m.insert("score_threshold".into(), number(self.threshold));
        m.insert("hybrid_semantic_weight".into(), Value::Null);
        let limit = args.limit.raw().map_or(Value::Null, |l| json!(l));
        m.insert("limit".into(), limit);
        m.insert("runtime_filters".into(), json!({}));
        m
    }
}
