//! A fast reader of what the event projection needs from each history line (ts, author, op,
//! agent fields, message, patch length) that validates every line exactly as [`parse_stream`]
//! does but never builds the patch values. It answers only clean streams; anything unusual
//! returns `None` and the caller uses the full parser, so errors are always the full parser's.
//!
//! [`parse_stream`]: super::parse_stream

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use super::head_scan::scan_head;
use crate::item::canon::js;

/// The projected fields of one history entry, borrowed from the line where possible.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryHead<'a> {
    /// `ts`.
    pub ts: Cow<'a, str>,
    /// `author`.
    pub author: Cow<'a, str>,
    /// `op`.
    pub op: Cow<'a, str>,
    /// `agent_harness` when it is a string.
    pub agent_harness: Option<Cow<'a, str>>,
    /// `agent_instance` when it is a string.
    pub agent_instance: Option<Cow<'a, str>>,
    /// `message` when it is a string.
    pub message: Option<Cow<'a, str>>,
    /// Number of patch operations.
    pub patch_len: usize,
}

/// The entry heads of a stream, with the byte span of each entry's trimmed line (parallel).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StreamHeads<'a> {
    /// The heads, in file order.
    pub heads: Vec<EntryHead<'a>>,
    /// The byte range of each entry's trimmed line text.
    pub spans: Vec<Range<usize>>,
}

/// Returns the entry heads of `bytes` when every line is a valid entry that
/// [`parse_stream`](super::parse_stream) would read with no error and no torn tail, giving the
/// same fields and spans; `None` when the stream needs the full parser (an invalid, torn or
/// non-UTF-8 line, a line not starting with `{` such as a conflict marker, a repeated known
/// key).
pub fn parse_stream_heads(bytes: &[u8]) -> Option<StreamHeads<'_>> {
    let mut out = StreamHeads::default();
    // Lines as `split_lines` gives them; empty pieces (after a final `\n`) are skipped below.
    let mut start = 0;
    while start < bytes.len() {
        let end = memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |n| start + n);
        let line = &bytes[start..end];
        start = end + 1;
        let text = js::trim(std::str::from_utf8(line).ok()?);
        if text.is_empty() {
            continue;
        }
        // Conflict markers and every other non-object line are the full parser's business.
        if !text.starts_with('{') {
            return None;
        }
        let head = match scan_head(text) {
            Some(head) => head,
            None => serde_json::from_str::<EntryHead<'_>>(text).ok()?,
        };
        let start = text.as_ptr() as usize - bytes.as_ptr() as usize;
        out.heads.push(head);
        out.spans.push(start..start + text.len());
    }
    Some(out)
}

// Every visitor below accepts only what the full parser accepts with the same meaning; any
// other shape is an error, which sends the stream to the full parser.

impl<'de> de::Deserialize<'de> for EntryHead<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(HeadVisitor)
    }
}

struct HeadVisitor;

impl<'de> Visitor<'de> for HeadVisitor {
    type Value = EntryHead<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a history entry object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        // ts, author, op, before_hash, after_hash; then the optional strings.
        let mut required: [Option<Cow<'de, str>>; 5] = Default::default();
        let mut optional: [Option<Option<Cow<'de, str>>>; 3] = Default::default();
        let mut patch_len = None;
        let mut version_seen = false;
        while let Some(key) = map.next_key::<Text<'de>>()? {
            let key = key.0;
            if let Some(i) = REQUIRED.iter().position(|k| *k == key) {
                let value = map.next_value::<Text<'de>>()?.0;
                once(required[i].replace(value).is_none(), &key)?;
            } else if let Some(i) = OPTIONAL.iter().position(|k| *k == key) {
                let value = map.next_value::<MaybeText<'de>>()?.0;
                once(optional[i].replace(value).is_none(), &key)?;
            } else if key == "patch" {
                let len = map.next_value_seed(PatchSeed)?;
                once(patch_len.replace(len).is_none(), &key)?;
            } else if key == "item_hash_version" {
                map.next_value::<Version>()?;
                once(!std::mem::replace(&mut version_seen, true), &key)?;
            } else {
                map.next_value::<Skip>()?;
            }
        }
        let [ts, author, op, before, after] = required;
        let (Some(ts), Some(author), Some(op), Some(_), Some(_), Some(patch_len)) =
            (ts, author, op, before, after, patch_len)
        else {
            return Err(de::Error::custom("incomplete entry"));
        };
        let [agent_harness, agent_instance, message] = optional.map(Option::flatten);
        Ok(EntryHead {
            ts,
            author,
            op,
            agent_harness,
            agent_instance,
            message,
            patch_len,
        })
    }
}

const REQUIRED: [&str; 5] = ["ts", "author", "op", "before_hash", "after_hash"];
const OPTIONAL: [&str; 3] = ["agent_harness", "agent_instance", "message"];

/// A repeated key is left to the full parser (where the last occurrence wins).
fn once<E: de::Error>(first: bool, key: &str) -> Result<(), E> {
    if first {
        Ok(())
    } else {
        Err(E::custom(format!("repeated key {key}")))
    }
}

/// A JSON string, borrowed when it has no escapes.
struct Text<'a>(Cow<'a, str>);

impl<'de> de::Deserialize<'de> for Text<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer
            .deserialize_str(MaybeTextVisitor)?
            .0
            .map(Text)
            .ok_or_else(|| de::Error::custom("not a string"))
    }
}

/// Any JSON value, kept when it is a string; otherwise validated like a `Value` and dropped.
struct MaybeText<'a>(Option<Cow<'a, str>>);

impl<'de> de::Deserialize<'de> for MaybeText<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(MaybeTextVisitor)
    }
}

struct MaybeTextVisitor;

impl<'de> Visitor<'de> for MaybeTextVisitor {
    type Value = MaybeText<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(MaybeText(Some(Cow::Borrowed(v))))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(MaybeText(Some(Cow::Owned(v.to_string()))))
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(MaybeText(None))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(MaybeText(None))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(MaybeText(None))
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(MaybeText(None))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(MaybeText(None))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        SkipVisitor.visit_seq(seq)?;
        Ok(MaybeText(None))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        SkipVisitor.visit_map(map)?;
        Ok(MaybeText(None))
    }
}

/// Any JSON value, parsed and validated exactly as `serde_json::Value` parses it (number
/// range, escapes, nesting limit) but not kept. (serde's `IgnoredAny` skips numbers without
/// the range check, so it would accept lines the full parser rejects.)
struct Skip;

impl<'de> de::Deserialize<'de> for Skip {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(SkipVisitor)
    }
}

struct SkipVisitor;

impl<'de> Visitor<'de> for SkipVisitor {
    type Value = Skip;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Skip, E> {
        Ok(Skip)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Skip, A::Error> {
        while seq.next_element::<Skip>()?.is_some() {}
        Ok(Skip)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Skip, A::Error> {
        while map.next_entry::<Skip, Skip>()?.is_some() {}
        Ok(Skip)
    }
}

/// `item_hash_version`: only `null`, 1 and 2 are accepted (as by the full parser).
struct Version;

impl<'de> de::Deserialize<'de> for Version {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Version;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("null, 1 or 2")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Version, E> {
                self.visit_f64(v as f64)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Version, E> {
                self.visit_f64(v as f64)
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Version, E> {
                if v == 1.0 || v == 2.0 {
                    Ok(Version)
                } else {
                    Err(E::custom("unsupported item_hash_version"))
                }
            }
            fn visit_unit<E: de::Error>(self) -> Result<Version, E> {
                Ok(Version)
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// `patch`: an array of well-formed operations; returns its length.
struct PatchSeed;

impl<'de> DeserializeSeed<'de> for PatchSeed {
    type Value = usize;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<usize, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = usize;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an array of patch operations")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<usize, A::Error> {
                let mut len = 0;
                while seq.next_element::<PatchOpCheck>()?.is_some() {
                    len += 1;
                }
                Ok(len)
            }
        }
        deserializer.deserialize_seq(V)
    }
}

/// One patch operation: an object with string `op` and `path` and a string or `null` `from`
/// if any, each given once.
struct PatchOpCheck;

impl<'de> de::Deserialize<'de> for PatchOpCheck {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = PatchOpCheck;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a patch operation")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<PatchOpCheck, A::Error> {
                let (mut op, mut path, mut from) = (false, false, false);
                while let Some(key) = map.next_key::<Text<'de>>()? {
                    match key.0.as_ref() {
                        "op" => {
                            map.next_value::<Text<'de>>()?;
                            once(!std::mem::replace(&mut op, true), "op")?;
                        }
                        "path" => {
                            map.next_value::<Text<'de>>()?;
                            once(!std::mem::replace(&mut path, true), "path")?;
                        }
                        "from" => {
                            map.next_value::<From>()?;
                            once(!std::mem::replace(&mut from, true), "from")?;
                        }
                        _ => {
                            map.next_value::<Skip>()?;
                        }
                    }
                }
                if op && path {
                    Ok(PatchOpCheck)
                } else {
                    Err(de::Error::custom("patch operation lacks op or path"))
                }
            }
        }
        deserializer.deserialize_map(V)
    }
}

/// A patch operation's `from`: a string or `null`.
struct From;

impl<'de> de::Deserialize<'de> for From {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = From;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or null")
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<From, E> {
                Ok(From)
            }
            fn visit_unit<E: de::Error>(self) -> Result<From, E> {
                Ok(From)
            }
        }
        deserializer.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::parse_stream;
    use std::path::Path;

    /// Asserts that the heads reader either defers or agrees with the full parser.
    fn agrees(text: &str) -> bool {
        let heads = parse_stream_heads(text.as_bytes());
        let full = parse_stream(text.as_bytes(), "pm-a", Path::new("x"));
        let Some(heads) = heads else {
            return false;
        };
        let full = full.expect("heads answered a stream the full parser rejects");
        assert!(full.torn_tail.is_none(), "{text:?}");
        assert_eq!(heads.spans, full.spans, "{text:?}");
        assert_eq!(heads.heads.len(), full.entries.len(), "{text:?}");
        for (h, e) in heads.heads.iter().zip(&full.entries) {
            assert_eq!(h.ts, e.ts.as_str());
            assert_eq!(h.author, e.author.as_str());
            assert_eq!(h.op, e.op.as_str());
            assert_eq!(h.agent_harness.as_deref(), e.agent_harness.as_deref());
            assert_eq!(h.agent_instance.as_deref(), e.agent_instance.as_deref());
            assert_eq!(h.message.as_deref(), e.message.as_deref());
            assert_eq!(h.patch_len, e.patch.len());
        }
        true
    }

    const BASE: &str = r#""before_hash":"h0","after_hash":"h1""#;

    fn line(body: &str) -> String {
        format!(r#"{{"ts":"t1","author":"a","op":"create",{body},{BASE}}}"#)
    }

    #[test]
    fn clean_streams_are_answered_with_the_full_parsers_fields() {
        let ops = r#""patch":[{"op":"add","path":"/metadata/id","value":{"a":[1,2.5,null,true]}},{"op":"move","from":"/body","path":"/metadata/x"},{"op":"copy","from":null,"path":"/y"}]"#;
        let cases = [
            String::new(),
            "\n\n  \n".to_string(),
            format!("{}\n", line(r#""patch":[]"#)),
            format!(
                "{}\r\n\n  {}  \n",
                line(ops),
                line(r#""patch":[],"message":"m\n\u00e9""#)
            ),
            line(r#""patch":[],"agent_harness":"codex","agent_instance":"abc","message":"""#),
            line(r#""patch":[],"agent_harness":null,"agent_instance":7,"message":{"x":1}"#),
            line(r#""patch":[],"item_hash_version":2,"extra":[{"deep":[[]]}],"context":null"#),
            line(r#""patch":[],"item_hash_version":1.0"#),
            line(r#""patch":[],"item_hash_version":null"#),
            format!(r#"{{"t\u0073":"t1","author":"a\"b","op":"x","patch":[],{BASE}}}"#),
            line(r#""patch":[{"op":"weird","path":"/a","extra":1e10}]"#),
        ];
        for text in &cases {
            assert!(agrees(text), "heads deferred on a clean stream: {text:?}");
        }
    }

    #[test]
    fn anything_unusual_is_left_to_the_full_parser() {
        let cases = [
            // invalid lines
            format!("{}\n{{not json\n", line(r#""patch":[]"#)),
            "[1,2]\n".to_string(),
            line(r#""patch":{}"#),
            line(r#""patch":[1]"#),
            line(r#""patch":[{"path":"/a"}]"#),
            line(r#""patch":[{"op":"add","path":3}]"#),
            line(r#""patch":[{"op":"add","path":"/a","from":1}]"#),
            line(r#""patch":[],"item_hash_version":3"#),
            line(r#""patch":[],"item_hash_version":"2""#),
            line(r#""patch":[],"x":1e400"#),
            line(r#""patch":[{"op":"add","path":"/a","value":-1e999}]"#),
            line(r#""patch":[],"x":"\ud800""#),
            format!(r#"{{"ts":1,"author":"a","op":"x","patch":[],{BASE}}}"#),
            r#"{"ts":"t","author":"a","op":"x","patch":[]}"#.to_string(),
            // repeated keys: the full parser keeps the last one
            line(r#""patch":[],"ts":"t2""#),
            line(r#""patch":[],"patch":[{"op":"add","path":"/a"}]"#),
            line(r#""patch":[{"op":"add","op":"remove","path":"/a"}]"#),
            // a torn tail and conflict markers
            format!("{}\n{{\"ts\":\"t", line(r#""patch":[]"#)),
            format!("{}\n<<<<<<< HEAD\n", line(r#""patch":[]"#)),
            format!("{}\n=======\n", line(r#""patch":[]"#)),
        ];
        for text in &cases {
            assert!(!agrees(text), "heads answered {text:?}");
        }
        assert!(parse_stream_heads(b"{\"ts\":\"\xff\"}\n").is_none());
    }
}
