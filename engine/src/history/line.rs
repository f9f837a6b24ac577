//! A typed reader of one history line that builds the [`HistoryEntry`] directly, without an
//! intermediate `Value` for the line object and its patch operations. It answers only lines the
//! full reader ([`HistoryEntry::from_value`]) accepts unambiguously; anything else (a repeated
//! key, a mistyped or `null` optional key, any error) returns `None` and the caller uses the full
//! reader, so errors and edge cases are always the full reader's.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::entry::{HistoryEntry, PatchOp, PatchOpKind, map_legacy_root};

/// Returns the entry of a trimmed, non-empty line when the fast path applies (see the module
/// comment); the result equals what the full reader builds from the same line.
pub(super) fn parse_entry_line(text: &str) -> Option<HistoryEntry> {
    let mut de = serde_json::Deserializer::from_str(text);
    let entry = EntrySeed.deserialize(&mut de).ok()?;
    de.end().ok()?;
    Some(entry)
}

/// Known keys of an entry line, as bits of a "seen" mask.
const KEYS: [&str; 16] = [
    "ts",
    "author",
    "op",
    "before_hash",
    "after_hash",
    "patch",
    "item_hash_version",
    "author_source",
    "agent_harness",
    "agent_model",
    "agent_model_source",
    "agent_instance",
    "message",
    "agent_provenance",
    "agent_episode",
    "context",
];

/// Any error sends the line to the full reader; the message is never shown.
fn bail<E: de::Error>() -> E {
    E::custom("not a fast-path line")
}

/// An object key, borrowed when it has no escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de> de::Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object key")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_string())))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

struct EntrySeed;

impl<'de> DeserializeSeed<'de> for EntrySeed {
    type Value = HistoryEntry;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<HistoryEntry, D::Error> {
        deserializer.deserialize_map(EntryVisitor)
    }
}

struct EntryVisitor;

impl<'de> Visitor<'de> for EntryVisitor {
    type Value = HistoryEntry;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a history entry object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<HistoryEntry, A::Error> {
        let mut seen = 0u32;
        // ts, author, op, before_hash, after_hash.
        let mut required: [Option<String>; 5] = Default::default();
        let mut patch = None;
        let mut item_hash_version = None;
        // author_source, agent_harness, agent_model, agent_model_source, agent_instance, message.
        let mut strings: [Option<String>; 6] = Default::default();
        // agent_provenance, agent_episode, context.
        let mut values: [Option<Value>; 3] = Default::default();
        let mut extra = Map::new();
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            let Some(index) = KEYS.iter().position(|k| *k == key) else {
                let value = map.next_value::<Value>()?;
                if extra.insert(key.into_owned(), value).is_some() {
                    return Err(bail());
                }
                continue;
            };
            if seen & (1 << index) != 0 {
                return Err(bail());
            }
            seen |= 1 << index;
            match index {
                0..=4 => required[index] = Some(map.next_value::<String>()?),
                5 => patch = Some(map.next_value_seed(PatchSeed)?),
                6 => {
                    item_hash_version = match map.next_value::<Value>()? {
                        Value::Null => None,
                        Value::Number(n) => match n.as_f64() {
                            Some(1.0) => Some(1),
                            Some(2.0) => Some(2),
                            _ => return Err(bail()),
                        },
                        _ => return Err(bail()),
                    }
                }
                7..=12 => match map.next_value::<Value>()? {
                    Value::String(s) => strings[index - 7] = Some(s),
                    _ => return Err(bail()),
                },
                _ => match map.next_value::<Value>()? {
                    Value::Null => return Err(bail()),
                    value => values[index - 13] = Some(value),
                },
            }
        }
        let [
            Some(ts),
            Some(author),
            Some(op),
            Some(before_hash),
            Some(after_hash),
        ] = required
        else {
            return Err(bail());
        };
        let Some(patch) = patch else {
            return Err(bail());
        };
        let [
            author_source,
            agent_harness,
            agent_model,
            agent_model_source,
            agent_instance,
            message,
        ] = strings;
        let [agent_provenance, agent_episode, context] = values;
        Ok(HistoryEntry {
            ts,
            author,
            author_source,
            agent_harness,
            agent_model,
            agent_model_source,
            agent_instance,
            agent_provenance,
            agent_episode,
            op,
            patch,
            before_hash,
            after_hash,
            item_hash_version,
            message,
            context,
            extra,
        })
    }
}

struct PatchSeed;

impl<'de> DeserializeSeed<'de> for PatchSeed {
    type Value = Vec<PatchOp>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Vec<PatchOp>, D::Error> {
        deserializer.deserialize_seq(PatchVisitor)
    }
}

struct PatchVisitor;

impl<'de> Visitor<'de> for PatchVisitor {
    type Value = Vec<PatchOp>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a patch array")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<PatchOp>, A::Error> {
        let mut ops = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(op) = seq.next_element_seed(OpSeed)? {
            ops.push(op);
        }
        Ok(ops)
    }
}

struct OpSeed;

impl<'de> DeserializeSeed<'de> for OpSeed {
    type Value = PatchOp;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<PatchOp, D::Error> {
        deserializer.deserialize_map(OpVisitor)
    }
}

struct OpVisitor;

impl<'de> Visitor<'de> for OpVisitor {
    type Value = PatchOp;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a patch operation object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<PatchOp, A::Error> {
        let mut op: Option<Cow<'de, str>> = None;
        let mut path: Option<String> = None;
        let mut from: Option<Option<String>> = None;
        let mut value: Option<Value> = None;
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            let repeated = match key.as_ref() {
                "op" => op.replace(map.next_value::<Key<'de>>()?.0).is_some(),
                "path" => path.replace(map.next_value::<String>()?).is_some(),
                "from" => {
                    let written = match map.next_value::<Value>()? {
                        Value::String(s) => Some(s),
                        Value::Null => None,
                        _ => return Err(bail()),
                    };
                    from.replace(written).is_some()
                }
                "value" => value.replace(map.next_value::<Value>()?).is_some(),
                // Other keys are dropped by the full reader too (after parsing as a `Value`).
                _ => {
                    map.next_value::<Value>()?;
                    false
                }
            };
            if repeated {
                return Err(bail());
            }
        }
        let (Some(op), Some(written)) = (op, path) else {
            return Err(bail());
        };
        let (path, original_path) = map_legacy_root(written);
        let (from, original_from) = match from.flatten() {
            Some(written) => {
                let (from, original) = map_legacy_root(written);
                (Some(from), original)
            }
            None => (None, None),
        };
        Ok(PatchOp {
            op: PatchOpKind::parse(&op),
            path,
            from,
            value,
            original_path,
            original_from,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use proptest::sample::{Index, select};

    const D001: &str = include_str!("../../../testdata/history/pm-d001.jsonl");

    fn full(text: &str) -> Option<HistoryEntry> {
        HistoryEntry::from_value(serde_json::from_str(text).ok()?).ok()
    }

    #[test]
    fn clean_lines_read_as_the_full_reader_reads_them() {
        let legacy = D001.replace("\"/metadata/", "\"/front_matter/");
        let lines = D001.lines().chain(legacy.lines()).chain([
            r#"{"ts":"t","author":"a","op":"update","patch":[{"op":"move","from":"/front_matter/a","path":"/metadata/b"},{"op":"remove","path":"/body","x":[1]}],"before_hash":"h0","after_hash":"h1","zz":{"k":null},"agent_provenance":{"model":null},"item_hash_version":null,"aa":1}"#,
            r#"{"ts":"t\u0041","author":"a","op":"x","patch":[{"op":"add","path":"/metadata/t","value":null,"from":null}],"before_hash":"h","after_hash":"h","item_hash_version":1.0,"message":"m"}"#,
        ]);
        for line in lines {
            let fast = parse_entry_line(line);
            assert!(fast.is_some(), "fast path refused {line}");
            assert_eq!(fast, full(line), "{line}");
        }
    }

    #[test]
    fn unusual_lines_go_to_the_full_reader() {
        let base =
            r#""ts":"t","author":"a","op":"o","patch":[],"before_hash":"h","after_hash":"h""#;
        for line in [
            format!("{{{base},\"ts\":\"again\"}}"),
            format!("{{{base},\"x\":1,\"x\":2}}"),
            format!("{{{base},\"message\":null}}"),
            format!("{{{base},\"author_source\":3}}"),
            format!("{{{base},\"context\":null}}"),
            format!("{{{base},\"item_hash_version\":3}}"),
            format!("{{{base},\"item_hash_version\":\"2\"}}"),
            format!("{{{base}}} trailing"),
            r#"{"ts":"t","author":"a","op":"o","patch":[{"op":"add","path":"/a","value":1,"value":2}],"before_hash":"h","after_hash":"h"}"#.to_string(),
            r#"{"ts":"t","author":"a","op":"o","patch":[{"op":"add","path":"/a","from":1}],"before_hash":"h","after_hash":"h"}"#.to_string(),
            r#"{"ts":"t","author":"a","op":"o","patch":[{"path":"/a"}],"before_hash":"h","after_hash":"h"}"#.to_string(),
            r#"{"ts":"t","author":"a","op":"o","patch":[1],"before_hash":"h","after_hash":"h"}"#.to_string(),
            r#"{"ts":"t","author":"a","op":"o","before_hash":"h","after_hash":"h"}"#.to_string(),
            r#"{"ts":1,"author":"a","op":"o","patch":[],"before_hash":"h","after_hash":"h"}"#.to_string(),
            "[1,2]".to_string(),
        ] {
            assert_eq!(parse_entry_line(&line), None, "{line}");
        }
    }

    /// Snippets that make a line unusual but often still valid JSON: repeated, `null` or
    /// mistyped keys, escapes, out-of-range numbers, odd operations.
    const SNIPPETS: &[&str] = &[
        r#""ts":"t2","#,
        r#""patch":[],"#,
        r#""patch":null,"#,
        r#""item_hash_version":2,"#,
        r#""item_hash_version":1.0,"#,
        r#""item_hash_version":"2","#,
        r#""message":null,"#,
        r#""message":7,"#,
        r#""context":null,"#,
        r#""agent_provenance":{"model":null},"#,
        r#""x":1e400,"#,
        r#""x":"\ud800","#,
        r#""t\u0073":"t","#,
        r#"{"op":"add","path":"/a","value":1,"value":2},"#,
        r#"{"op":"move","from":7,"path":"/a"},"#,
        r#"{"op":"copy","from":null,"path":""},"#,
        r#"{"path":"/a"},"#,
        "null,",
        "7,",
        ",",
        "\"",
        "}",
        "]",
    ];

    /// Cuts, edits and insertions of `line` at character boundaries.
    fn forged(line: &str, at: Index, cut: Index, snippet: &str, mode: u8) -> String {
        let bounds: Vec<usize> = (0..=line.len())
            .filter(|i| line.is_char_boundary(*i))
            .collect();
        let at = bounds[at.index(bounds.len())];
        let cut = bounds[cut.index(bounds.len())];
        match mode {
            0 => line[..cut].to_string(),
            1 => format!("{}{snippet}{}", &line[..at], &line[at..]),
            2 => format!("{}{snippet}{}", &line[..at.min(cut)], &line[at.max(cut)..]),
            _ => format!("{{{snippet}{}", line.strip_prefix('{').unwrap_or(line)),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]

        /// The fast path answers only lines the full reader reads, and with its entry.
        #[test]
        fn the_fast_path_never_disagrees_with_the_full_reader(
            line in select(D001.lines().collect::<Vec<_>>()),
            at in any::<Index>(),
            cut in any::<Index>(),
            snippets in proptest::collection::vec(select(SNIPPETS), 1..3),
            mode in 0u8..4,
        ) {
            let text = forged(line, at, cut, &snippets.concat(), mode);
            if let Some(fast) = parse_entry_line(&text) {
                prop_assert_eq!(Some(fast), full(&text), "{}", text);
            }
        }
    }
}
