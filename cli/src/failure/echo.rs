//! What an output may repeat of the command line. Every value an error report echoes
//! (arguments, refused values, messages, hints) passes through here: credentials are redacted
//! and each value is cut at [`MAX_ECHO_CHARS`] with a visible marker. A read's echo of its own
//! arguments (`filters`, `query`) is redacted here too ([`redact_echo`]). These rules live
//! nowhere else.

/// The longest echoed value, in characters, before it is cut.
pub const MAX_ECHO_CHARS: usize = 200;

/// How much longer than [`MAX_ECHO_CHARS`] a run of non-space characters may be before it is
/// cut: room for the quotes and the marker count around an argument that is already cut, so it
/// is not cut twice.
const RUN_SLACK: usize = 24;

/// What replaces a credential.
const REDACTED: &str = "[redacted]";

/// Prefixes of GitHub tokens (classic `ghp_`/`gho_`/`ghu_`/`ghs_`/`ghr_`, fine-grained
/// `github_pat_`).
const GITHUB_PREFIXES: [&str; 6] = ["github_pat_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_"];

/// How far a userinfo is looked for past its start, in bytes (keeps redaction linear on long
/// arguments; real userinfo is far shorter).
const USERINFO_LOOKAHEAD: usize = 512;

/// Returns one echoed value (an argument, a refused value): redacted, then bounded.
pub fn scrub(value: &str) -> String {
    bound(&redact(value), MAX_ECHO_CHARS)
}

/// Returns a sentence that may quote arguments (a message, a hint, a cause): redacted, every
/// over-long argument of `args` shortened where it is quoted, and any remaining run of
/// non-space characters cut (see [`bound_runs`]).
pub fn scrub_text(text: &str, args: &[String]) -> String {
    let mut text = redact(text);
    for arg in args.iter().map(|a| redact(a)) {
        if arg.chars().count() > MAX_ECHO_CHARS && text.contains(arg.as_str()) {
            text = text.replace(arg.as_str(), &bound(&arg, MAX_ECHO_CHARS));
        }
    }
    bound_runs(&text)
}

/// Returns `text` cut after `max` characters, with a marker naming how many were left out.
fn bound(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some((cut, _)) => {
            let omitted = text[cut..].chars().count();
            format!("{}…[{omitted} more characters]", &text[..cut])
        }
    }
}

/// Cuts every run of non-whitespace characters longer than [`MAX_ECHO_CHARS`] plus
/// [`RUN_SLACK`].
fn bound_runs(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(4 * MAX_ECHO_CHARS));
    let mut run_start = None;
    for (i, c) in text.char_indices() {
        match (c.is_whitespace(), run_start) {
            (false, None) => run_start = Some(i),
            (true, Some(start)) => {
                out.push_str(&bound_run(&text[start..i]));
                out.push(c);
                run_start = None;
            }
            (true, None) => out.push(c),
            (false, Some(_)) => {}
        }
    }
    if let Some(start) = run_start {
        out.push_str(&bound_run(&text[start..]));
    }
    out
}

/// Returns one run of non-space characters, cut at [`MAX_ECHO_CHARS`] when it is longer than
/// the limit plus [`RUN_SLACK`].
fn bound_run(run: &str) -> String {
    if run.chars().nth(MAX_ECHO_CHARS + RUN_SLACK).is_some() {
        bound(run, MAX_ECHO_CHARS)
    } else {
        run.to_owned()
    }
}

/// The keys of a read envelope that repeat the command's arguments.
const ECHO_KEYS: [&str; 2] = ["filters", "query"];

/// Redacts every string under the envelope keys that repeat the command's arguments (a filter
/// value or search query holding `https://user:secret@host` prints `https://[redacted]@host`;
/// the read itself used the value as given).
pub fn redact_echo(env: &mut serde_json::Map<String, serde_json::Value>) {
    for key in ECHO_KEYS {
        if let Some(value) = env.get_mut(key) {
            redact_value(value);
        }
    }
}

fn redact_value(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::String(text) => *text = redact(text),
        serde_json::Value::Array(items) => items.iter_mut().for_each(redact_value),
        serde_json::Value::Object(map) => map.values_mut().for_each(redact_value),
        _ => {}
    }
}

/// Returns `text` with URL userinfo and known token shapes replaced by `[redacted]`.
pub fn redact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut i = 0;
    while i < text.len() {
        if let Some((end, replacement)) = secret_at(text, i) {
            out.push_str(&text[copied..i]);
            out.push_str(&replacement);
            copied = end;
            i = end;
        } else {
            i += text[i..].chars().next().map_or(1, char::len_utf8);
        }
    }
    out.push_str(&text[copied..]);
    out
}

/// Returns the end of a credential starting at byte `i` and what replaces it.
fn secret_at(text: &str, i: usize) -> Option<(usize, String)> {
    let rest = &text[i..];
    if let Some(after) = rest.strip_prefix("://") {
        let userinfo = url_userinfo(after)?;
        return Some((i + 3 + userinfo, format!("://{REDACTED}")));
    }
    let boundary = text[..i]
        .chars()
        .next_back()
        .is_none_or(|c| !c.is_ascii_alphanumeric() && c != '_');
    if !boundary {
        return None;
    }
    token_at(rest)
        .or_else(|| bare_userinfo(rest))
        .map(|(len, replacement)| (i + len, replacement))
}

/// Returns the length of the userinfo of a URL authority (`user:pass` of
/// `user:pass@host/…`), `None` when the authority has none.
fn url_userinfo(after_scheme: &str) -> Option<usize> {
    let after_scheme = lookahead(after_scheme);
    let authority_end = after_scheme
        .find(|c: char| "/?#\"'<>".contains(c) || c.is_whitespace())
        .unwrap_or(after_scheme.len());
    let at = after_scheme[..authority_end].rfind('@')?;
    (at > 0).then_some(at)
}

/// Returns the length and replacement of a `user:password@` prefix (a URL whose `//` was
/// collapsed, e.g. in a normalized path, or an scp-like remote).
fn bare_userinfo(rest: &str) -> Option<(usize, String)> {
    let rest = lookahead(rest);
    let end = rest.find(|c: char| "/@\"'<>".contains(c) || c.is_whitespace())?;
    if !rest[end..].starts_with('@') {
        return None;
    }
    let (user, password) = rest[..end].split_once(':')?;
    (!user.is_empty() && !password.is_empty()).then(|| (end, REDACTED.to_owned()))
}

/// Returns the first [`USERINFO_LOOKAHEAD`] bytes of `text` (cut at a character boundary).
fn lookahead(text: &str) -> &str {
    let mut end = text.len().min(USERINFO_LOOKAHEAD);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Returns the length and replacement of a token at the start of `rest`: a GitHub token, an AWS
/// access key id or a `Bearer` credential.
fn token_at(rest: &str) -> Option<(usize, String)> {
    let word = |s: &str, ok: fn(char) -> bool| s.find(|c: char| !ok(c)).unwrap_or(s.len());
    for prefix in GITHUB_PREFIXES {
        if let Some(body) = rest.strip_prefix(prefix) {
            let len = word(body, |c| c.is_ascii_alphanumeric() || c == '_');
            return (len >= 20).then(|| (prefix.len() + len, format!("{prefix}{REDACTED}")));
        }
    }
    for prefix in ["AKIA", "ASIA"] {
        if let Some(body) = rest.strip_prefix(prefix) {
            let len = word(body, |c| c.is_ascii_uppercase() || c.is_ascii_digit());
            return (len == 16 && !body[len..].starts_with(|c: char| c.is_ascii_alphanumeric()))
                .then(|| (prefix.len() + len, format!("{prefix}{REDACTED}")));
        }
    }
    let head = rest.get(..6)?;
    if !head.eq_ignore_ascii_case("bearer") {
        return None;
    }
    let spaces = word(&rest[6..], |c| c == ' ' || c == '\t');
    let body = &rest[6 + spaces..];
    let len = word(body, |c| c.is_ascii_alphanumeric() || "-._~+/=".contains(c));
    (spaces > 0 && len >= 8).then(|| (6 + spaces + len, format!("{head} {REDACTED}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_userinfo_is_redacted_wherever_it_appears() {
        for (raw, want) in [
            ("https://user:secret@host/x", "https://[redacted]@host/x"),
            ("--remote=ssh://tok@host", "--remote=ssh://[redacted]@host"),
            (
                "see https://u:p@h.io/a?b=c and http://plain.io/x",
                "see https://[redacted]@h.io/a?b=c and http://plain.io/x",
            ),
            // A path that collapsed the URL's `//`.
            (
                "/w/https:/user:secret@host/x",
                "/w/https:/[redacted]@host/x",
            ),
            ("user:secret@host:repo", "[redacted]@host:repo"),
            ("https://host/x@y", "https://host/x@y"),
            ("git@github.com:o/r", "git@github.com:o/r"),
            ("a@b", "a@b"),
        ] {
            assert_eq!(redact(raw), want, "{raw}");
        }
    }

    #[test]
    fn token_shapes_are_redacted() {
        let ghp = format!("ghp_{}", "A1b2".repeat(9));
        let pat = format!("github_pat_{}", "x_Y9".repeat(15));
        for (raw, want) in [
            (ghp.clone(), "ghp_[redacted]".to_owned()),
            (format!("token={ghp}."), "token=ghp_[redacted].".to_owned()),
            (pat, "github_pat_[redacted]".to_owned()),
            ("AKIAIOSFODNN7EXAMPLE".into(), "AKIA[redacted]".into()),
            (
                "key AKIAIOSFODNN7EXAMPLE!".into(),
                "key AKIA[redacted]!".into(),
            ),
            (
                "Authorization: Bearer abc.def-123_XYZ".into(),
                "Authorization: Bearer [redacted]".into(),
            ),
            (
                "bearer  eyJhbGciOiJIUzI1".into(),
                "bearer [redacted]".into(),
            ),
        ] {
            assert_eq!(redact(&raw), want, "{raw}");
        }
        for kept in [
            "ghp_short",
            "xghp_aaaaaaaaaaaaaaaaaaaaaaaaaa",
            "AKIASHORT",
            "AKIAIOSFODNN7EXAMPLEX",
            "Bearer x",
            "the bearer of news",
            "pm-a1b2",
        ] {
            assert_eq!(redact(kept), kept);
        }
    }

    #[test]
    fn values_are_cut_at_200_characters_with_a_marker() {
        let long = "é".repeat(10_000);
        let cut = scrub(&long);
        assert!(cut.starts_with(&"é".repeat(200)));
        assert!(cut.ends_with("…[9800 more characters]"), "{cut}");
        assert_eq!(scrub("short"), "short");
        assert_eq!(scrub(&"a".repeat(200)), "a".repeat(200));
    }

    #[test]
    fn sentences_cut_long_arguments_and_long_runs() {
        let spaced = "a b ".repeat(1_000);
        let args = vec![spaced.clone()];
        let text = scrub_text(&format!("invalid item id \"{spaced}\": bad"), &args);
        assert!(text.len() < 300, "{} bytes", text.len());
        assert!(text.contains("more characters]"));
        let id = "x".repeat(5_000);
        let text = scrub_text(&format!("Item {id} not found"), &[]);
        assert!(
            text.starts_with(&format!("Item {}…", "x".repeat(200))),
            "{text}"
        );
        assert!(
            text.ends_with("…[4800 more characters] not found"),
            "{text}"
        );
        // An argument is cut once, even when quoted.
        let arg = "q".repeat(1_000);
        let text = scrub_text(&format!("unknown command '{arg}'"), &[arg]);
        assert!(text.ends_with("…[800 more characters]'"), "{text}");
        assert_eq!(scrub_text("a  b\nc", &[]), "a  b\nc");
    }
}
