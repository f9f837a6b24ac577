//! A byte scanner for the history lines pm writes: it reads an entry's head fields straight
//! from the line and checks the rest of the JSON syntax on the way, but accepts only a strict
//! subset of JSON (no `\u` escapes, no exponents, at most 15 digits per number, shallow
//! nesting). Whenever it is unsure it returns `None` and the caller uses the serde reader, so
//! an answer here is always the serde reader's answer.

use std::borrow::Cow;

use super::heads::EntryHead;
use crate::toon::{Stops, skip_to};

/// Deepest nesting the scanner follows (serde_json's limit is 128).
const MAX_DEPTH: usize = 64;
/// Most digits in a number the scanner accepts: such numbers are always finite and in range.
const MAX_DIGITS: usize = 15;

/// Stops inside a string: its end, an escape, or a control character (invalid in JSON).
const STRING_STOPS: Stops = Stops::bytes(b'"', b'\\', b'\\').and_below(0x20);

/// Returns the head of one trimmed history line when the line is in the scanner's subset and
/// is a complete entry; `None` when the serde reader has to decide.
pub(super) fn scan_head(text: &str) -> Option<EntryHead<'_>> {
    let mut c = Cursor { s: text, i: 0 };
    c.expect(b'{')?;
    // ts, author, op, before_hash, after_hash; then the optional strings.
    let mut required: [Option<Cow<'_, str>>; 5] = Default::default();
    let mut optional: [Option<Option<Cow<'_, str>>>; 3] = Default::default();
    let mut patch_len = None;
    let mut version_seen = false;
    c.ws();
    if c.peek()? != b'}' {
        loop {
            let key = c.string()?;
            c.ws();
            c.expect(b':')?;
            c.ws();
            if let Some(k) = REQUIRED.iter().position(|k| *k == key) {
                let value = c.string()?;
                required[k].replace(value).is_none().then_some(())?;
            } else if let Some(k) = OPTIONAL.iter().position(|k| *k == key) {
                let value = if c.peek()? == b'"' {
                    Some(c.string()?)
                } else {
                    c.skip_value(1)?;
                    None
                };
                optional[k].replace(value).is_none().then_some(())?;
            } else if key == "patch" {
                let len = c.patch()?;
                patch_len.replace(len).is_none().then_some(())?;
            } else if key == "item_hash_version" {
                c.version()?;
                (!std::mem::replace(&mut version_seen, true)).then_some(())?;
            } else {
                c.skip_value(1)?;
            }
            c.ws();
            match c.next()? {
                b',' => c.ws(),
                b'}' => break,
                _ => return None,
            }
        }
    } else {
        c.i += 1;
    }
    c.ws();
    if c.i != text.len() {
        return None;
    }
    let [ts, author, op, before, after] = required;
    let (Some(ts), Some(author), Some(op), Some(_), Some(_), Some(patch_len)) =
        (ts, author, op, before, after, patch_len)
    else {
        return None;
    };
    let [agent_harness, agent_instance, message] = optional.map(Option::flatten);
    Some(EntryHead {
        ts,
        author,
        op,
        agent_harness,
        agent_instance,
        message,
        patch_len,
    })
}

const REQUIRED: [&str; 5] = ["ts", "author", "op", "before_hash", "after_hash"];
const OPTIONAL: [&str; 3] = ["agent_harness", "agent_instance", "message"];

struct Cursor<'a> {
    s: &'a str,
    i: usize,
}

impl<'a> Cursor<'a> {
    fn peek(&self) -> Option<u8> {
        self.s.as_bytes().get(self.i).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let c = self.peek()?;
        self.i += 1;
        Some(c)
    }

    fn expect(&mut self, want: u8) -> Option<()> {
        (self.next()? == want).then_some(())
    }

    /// Skips JSON whitespace.
    fn ws(&mut self) {
        let b = self.s.as_bytes();
        while matches!(b.get(self.i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    /// Reads a string (the cursor is at its opening quote), borrowed unless it has escapes.
    fn string(&mut self) -> Option<Cow<'a, str>> {
        self.expect(b'"')?;
        let b = self.s.as_bytes();
        let start = self.i;
        let mut owned: Option<String> = None;
        let mut plain = start;
        loop {
            let i = skip_to(b, self.i, STRING_STOPS);
            match b.get(i)? {
                b'"' => {
                    self.i = i + 1;
                    return Some(match owned {
                        None => Cow::Borrowed(&self.s[start..i]),
                        Some(mut text) => {
                            text.push_str(&self.s[plain..i]);
                            Cow::Owned(text)
                        }
                    });
                }
                b'\\' => {
                    let c = match b.get(i + 1)? {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        // `\u` escapes (surrogate rules) are left to serde.
                        _ => return None,
                    };
                    let text = owned.get_or_insert_with(String::new);
                    text.push_str(&self.s[plain..i]);
                    text.push(c);
                    self.i = i + 2;
                    plain = self.i;
                }
                // A raw control character.
                _ => return None,
            }
        }
    }

    /// Skips one value of the subset (the cursor is at its first byte).
    fn skip_value(&mut self, depth: usize) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        match self.peek()? {
            b'"' => self.string().map(drop),
            b'{' => {
                self.i += 1;
                self.ws();
                if self.peek()? == b'}' {
                    self.i += 1;
                    return Some(());
                }
                loop {
                    self.string()?;
                    self.ws();
                    self.expect(b':')?;
                    self.ws();
                    self.skip_value(depth + 1)?;
                    self.ws();
                    match self.next()? {
                        b',' => self.ws(),
                        b'}' => return Some(()),
                        _ => return None,
                    }
                }
            }
            b'[' => {
                self.i += 1;
                self.ws();
                if self.peek()? == b']' {
                    self.i += 1;
                    return Some(());
                }
                loop {
                    self.skip_value(depth + 1)?;
                    self.ws();
                    match self.next()? {
                        b',' => self.ws(),
                        b']' => return Some(()),
                        _ => return None,
                    }
                }
            }
            b't' => self.literal("true"),
            b'f' => self.literal("false"),
            b'n' => self.literal("null"),
            _ => self.number(),
        }
    }

    fn literal(&mut self, word: &str) -> Option<()> {
        let end = self.i + word.len();
        (self.s.as_bytes().get(self.i..end)? == word.as_bytes()).then_some(())?;
        self.i = end;
        Some(())
    }

    /// Skips `-?(0|[1-9][0-9]*)(\.[0-9]+)?` with at most [`MAX_DIGITS`] digits.
    fn number(&mut self) -> Option<()> {
        let b = self.s.as_bytes();
        if b.get(self.i) == Some(&b'-') {
            self.i += 1;
        }
        let int = self.digits();
        if int == 0 || (int > 1 && b[self.i - int] == b'0') {
            return None;
        }
        let mut total = int;
        if b.get(self.i) == Some(&b'.') {
            self.i += 1;
            let frac = self.digits();
            if frac == 0 {
                return None;
            }
            total += frac;
        }
        // Exponents (range checks) are left to serde.
        if total > MAX_DIGITS || matches!(b.get(self.i), Some(b'e' | b'E')) {
            return None;
        }
        Some(())
    }

    fn digits(&mut self) -> usize {
        let b = self.s.as_bytes();
        let start = self.i;
        while b.get(self.i).is_some_and(u8::is_ascii_digit) {
            self.i += 1;
        }
        self.i - start
    }

    /// `item_hash_version`: `null`, `1` or `2` as written by pm (other spellings go to serde).
    fn version(&mut self) -> Option<()> {
        match self.peek()? {
            b'n' => self.literal("null"),
            b'1' | b'2' => {
                self.i += 1;
                (!matches!(self.peek(), Some(b'0'..=b'9' | b'.' | b'e' | b'E'))).then_some(())
            }
            _ => None,
        }
    }

    /// `patch`: an array of objects with string `op` and `path` and a string or `null` `from`
    /// if any, each given once; returns its length.
    fn patch(&mut self) -> Option<usize> {
        self.expect(b'[')?;
        self.ws();
        if self.peek()? == b']' {
            self.i += 1;
            return Some(0);
        }
        let mut len = 0;
        loop {
            self.patch_op()?;
            len += 1;
            self.ws();
            match self.next()? {
                b',' => self.ws(),
                b']' => return Some(len),
                _ => return None,
            }
        }
    }

    fn patch_op(&mut self) -> Option<()> {
        self.expect(b'{')?;
        let (mut op, mut path, mut from) = (false, false, false);
        self.ws();
        if self.peek()? == b'}' {
            return None;
        }
        loop {
            let key = self.string()?;
            self.ws();
            self.expect(b':')?;
            self.ws();
            let seen = match key.as_ref() {
                "op" => {
                    self.string()?;
                    &mut op
                }
                "path" => {
                    self.string()?;
                    &mut path
                }
                "from" => {
                    if self.peek()? == b'"' {
                        self.string()?;
                    } else {
                        self.literal("null")?;
                    }
                    &mut from
                }
                _ => {
                    self.skip_value(3)?;
                    self.ws();
                    if self.sep_or_end()? {
                        break;
                    }
                    continue;
                }
            };
            (!std::mem::replace(seen, true)).then_some(())?;
            self.ws();
            if self.sep_or_end()? {
                break;
            }
        }
        (op && path).then_some(())
    }

    /// After an object member: `true` at the closing brace, `false` after a comma.
    fn sep_or_end(&mut self) -> Option<bool> {
        match self.next()? {
            b',' => {
                self.ws();
                Some(false)
            }
            b'}' => Some(true),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The scanner either defers or gives exactly the serde reader's head.
    fn agrees(text: &str) -> bool {
        let fast = scan_head(text);
        let serde = serde_json::from_str::<EntryHead<'_>>(text).ok();
        match fast {
            None => false,
            Some(head) => {
                assert_eq!(Some(&head), serde.as_ref(), "{text:?}");
                true
            }
        }
    }

    const BASE: &str = r#""before_hash":"h0","after_hash":"h1""#;

    fn line(body: &str) -> String {
        format!(r#"{{"ts":"t1","author":"a","op":"create",{body},{BASE}}}"#)
    }

    #[test]
    fn answers_the_lines_pm_writes() {
        let cases = [
            line(r#""patch":[]"#),
            line(
                r#""patch":[{"op":"add","path":"/metadata/id","value":{"a":[1,2.5,-0,null,true,false,"x\"y"]}},{"op":"move","from":"/body","path":"/x"},{"op":"copy","from":null,"path":"/y"}]"#,
            ),
            line(
                r#""patch":[],"message":"m\n\t\\ \/ é","agent_harness":"codex","agent_instance":"abc""#,
            ),
            line(r#""patch":[],"agent_harness":null,"agent_instance":7,"message":{"x":[]}"#),
            line(r#""patch":[],"item_hash_version":2,"extra":[{"deep":[[]]}],"context":null"#),
            line(r#""patch":[],"item_hash_version":1"#),
            line(r#""patch":[],"item_hash_version":null"#),
            format!(
                "{{ \"ts\" : \"t1\" ,\r\n\"author\":\"a\\\"b\",\"op\":\"x\",\"patch\":[ ],{BASE} }}"
            ),
        ];
        for text in &cases {
            assert!(agrees(text), "scanner deferred on {text:?}");
        }
    }

    #[test]
    fn defers_what_it_does_not_know() {
        let cases = [
            line(r#""patch":[],"x":1e3"#),
            line(r#""patch":[],"x":1234567890123456"#),
            line(r#""patch":[],"x":"\u00e9""#),
            line(r#""patch":[],"item_hash_version":1.0"#),
            line(r#""patch":[],"item_hash_version":3"#),
            line(r#""patch":[],"x":01"#),
            line(r#""patch":[],"x":[1,]"#),
            line(r#""patch":[],"x":{"a":1,}"#),
            line(r#""patch":[],"x":tru"#),
            line(r#""patch":[],"x":"a	b""#),
            line(r#""patch":[],"ts":"t2""#),
            line(r#""patch":[{"op":"add"}]"#),
            line(r#""patch":[{"op":"add","op":"x","path":"/a"}]"#),
            line(r#""patch":[{"op":"add","path":"/a","from":1}]"#),
            line(r#""patch":[{}]"#),
            line(r#""patch":{}"#),
            format!("{}x", line(r#""patch":[]"#)),
            r#"{"ts":"t","author":"a","op":"x","patch":[]}"#.to_string(),
            format!("{}{}", "[".repeat(70), "]".repeat(70)),
        ];
        for text in &cases {
            assert!(!agrees(text), "scanner answered {text:?}");
        }
    }

    fn json_value() -> impl Strategy<Value = String> {
        let leaf = prop_oneof![
            Just("null".to_string()),
            Just("true".to_string()),
            Just("false".to_string()),
            "-?(0|[1-9][0-9]{0,17})(\\.[0-9]{1,4})?([eE][+-]?[0-9]{1,3})?",
            "\"([a-z \\\\\"/]|\\\\[nrtbf\"/\\\\u]|é|\t){0,8}\"",
        ];
        leaf.prop_recursive(4, 24, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4)
                    .prop_map(|v| format!("[{}]", v.join(","))),
                proptest::collection::vec(("[a-z]{1,3}", inner), 0..4).prop_map(|v| {
                    let members: Vec<String> =
                        v.iter().map(|(k, v)| format!("\"{k}\": {v}")).collect();
                    format!("{{{}}}", members.join(" ,"))
                }),
            ]
        })
    }

    proptest! {
        #[test]
        fn never_disagrees_with_serde(
            value in json_value(),
            message in json_value(),
            cut in 0usize..400,
        ) {
            let text = line(&format!(
                r#""patch":[{{"op":"add","path":"/a","value":{value}}}],"message":{message}"#
            ));
            agrees(&text);
            // Damaged lines: the scanner must still never give a different answer.
            let mut cut = cut.min(text.len());
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            let mut after = (cut + 1).min(text.len());
            while !text.is_char_boundary(after) {
                after += 1;
            }
            agrees(&text[..cut]);
            agrees(&format!("{}{}", &text[..cut], &text[after..]));
        }
    }
}
