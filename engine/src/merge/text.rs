//! Line-level three-way merge of text (item bodies, and the fallback for files the field-aware
//! drivers cannot parse), through `diffy`'s diff3. Conflicts keep git-style markers
//! (`<<<<<<< ours`, `||||||| original`, `=======`, `>>>>>>> theirs`).

/// The outcome of a text merge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TextMerge {
    /// Every change applied without overlap.
    Clean(String),
    /// Both sides changed the same lines: the text holds conflict markers.
    Conflicted(String),
}

impl TextMerge {
    /// Returns the merged text, markers included.
    pub fn into_text(self) -> String {
        match self {
            TextMerge::Clean(text) | TextMerge::Conflicted(text) => text,
        }
    }
}

/// Merges `ours` and `theirs` against `base`, line by line.
///
/// A text without a final newline is merged as if it had one (so a marker never ends up glued
/// to a last line), and the added newline is taken off again.
pub fn merge_lines(base: &str, ours: &str, theirs: &str) -> TextMerge {
    if ours == theirs || theirs == base {
        return TextMerge::Clean(ours.to_string());
    }
    if ours == base {
        return TextMerge::Clean(theirs.to_string());
    }
    let terminated = |s: &str| {
        if s.is_empty() || s.ends_with('\n') {
            s.to_string()
        } else {
            format!("{s}\n")
        }
    };
    let trailing = ours.ends_with('\n') || (ours.is_empty() && theirs.ends_with('\n'));
    let finish = |mut text: String| {
        if !trailing && text.ends_with('\n') {
            text.pop();
        }
        text
    };
    let mut options = diffy::MergeOptions::new();
    options.set_conflict_style(diffy::ConflictStyle::Diff3);
    match options.merge(&terminated(base), &terminated(ours), &terminated(theirs)) {
        Ok(text) => TextMerge::Clean(finish(text)),
        Err(text) => TextMerge::Conflicted(finish(text)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separate_hunks_merge() {
        let base = "a\nb\nc\nd\ne";
        let ours = "A\nb\nc\nd\ne";
        let theirs = "a\nb\nc\nd\nE";
        assert_eq!(
            merge_lines(base, ours, theirs),
            TextMerge::Clean("A\nb\nc\nd\nE".into())
        );
    }

    #[test]
    fn overlapping_hunks_keep_markers_on_their_own_lines() {
        let merged = merge_lines("a\nb", "a\nB", "a\nβ").into_text();
        assert_eq!(
            merged,
            "a\n<<<<<<< ours\nB\n||||||| original\nb\n=======\nβ\n>>>>>>> theirs"
        );
    }

    #[test]
    fn one_sided_and_identical_changes_are_taken() {
        assert_eq!(merge_lines("x", "x", "y"), TextMerge::Clean("y".into()));
        assert_eq!(merge_lines("x", "y", "y"), TextMerge::Clean("y".into()));
        assert_eq!(merge_lines("", "a\n", "b\n").into_text().lines().count(), 6);
    }
}
