//! Where a hunk's lines are in a file: Codex's `seek_sequence` ladder. Each rung compares
//! the lines more loosely than the one before, over every position from `start`, and the
//! first rung with a match decides: exact, then trailing whitespace ignored, then leading
//! and trailing whitespace ignored, then also typographic punctuation and spaces folded to
//! ASCII. An end-of-file hunk is tried at the end of the file only.

use std::cell::OnceCell;

/// The rung of the ladder that found a hunk's lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Fuzz {
    /// The lines are as the patch gives them.
    Exact,
    /// Found once trailing whitespace is ignored.
    TrailingWhitespace,
    /// Found once leading and trailing whitespace is ignored.
    Whitespace,
    /// Found once typographic dashes, quotes and spaces are also read as their ASCII forms.
    Punctuation,
}

impl Fuzz {
    /// The rung's stable name: "exact", "trailing-whitespace", "whitespace" or "punctuation".
    pub fn name(self) -> &'static str {
        match self {
            Fuzz::Exact => "exact",
            Fuzz::TrailingWhitespace => "trailing-whitespace",
            Fuzz::Whitespace => "whitespace",
            Fuzz::Punctuation => "punctuation",
        }
    }
}

/// A file's lines (without their line endings), with their folded forms made once, when
/// the last rung first needs them.
pub(crate) struct Lines<'a> {
    pub text: Vec<&'a str>,
    folded: OnceCell<Vec<String>>,
}

impl<'a> Lines<'a> {
    pub fn new(text: Vec<&'a str>) -> Lines<'a> {
        Lines { text, folded: OnceCell::new() }
    }

    pub fn len(&self) -> usize {
        self.text.len()
    }

    fn folded(&self) -> &[String] {
        self.folded.get_or_init(|| self.text.iter().map(|l| fold(l)).collect())
    }
}

/// The first position at or after `start` where `pattern` occurs, and the rung that found
/// it. An empty pattern is found at `start`. With `eof` only the position that ends the
/// file is tried.
pub(crate) fn seek(lines: &Lines<'_>, pattern: &[&str], start: usize, eof: bool) -> Option<(usize, Fuzz)> {
    if pattern.is_empty() {
        return Some((start, Fuzz::Exact));
    }
    let n = lines.len();
    if pattern.len() > n {
        return None;
    }
    let from = if eof { n - pattern.len() } else { start };
    let last = n - pattern.len();
    let text = &lines.text;
    let find =
        |same: &dyn Fn(usize, usize) -> bool| (from..=last).find(|&i| (0..pattern.len()).all(|k| same(i + k, k)));
    if let Some(i) = find(&|l, k| text[l] == pattern[k]) {
        return Some((i, Fuzz::Exact));
    }
    if let Some(i) = find(&|l, k| text[l].trim_end() == pattern[k].trim_end()) {
        return Some((i, Fuzz::TrailingWhitespace));
    }
    if let Some(i) = find(&|l, k| text[l].trim() == pattern[k].trim()) {
        return Some((i, Fuzz::Whitespace));
    }
    let wanted: Vec<String> = pattern.iter().map(|p| fold(p)).collect();
    let folded = lines.folded();
    find(&|l, k| folded[l] == wanted[k]).map(|i| (i, Fuzz::Punctuation))
}

/// A line trimmed, with typographic dashes, quotes and spaces read as ASCII.
fn fold(line: &str) -> String {
    line.trim()
        .chars()
        .map(|c| match c {
            '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2015}' | '\u{2212}' => '-',
            '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => '\'',
            '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' => '"',
            '\u{00A0}' | '\u{2002}' | '\u{2003}' | '\u{2004}' | '\u{2005}' | '\u{2006}' | '\u{2007}' | '\u{2008}'
            | '\u{2009}' | '\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
            other => other,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(lines: &[&str], pattern: &[&str], start: usize, eof: bool) -> Option<(usize, Fuzz)> {
        seek(&Lines::new(lines.to_vec()), pattern, start, eof)
    }

    #[test]
    fn each_rung_in_turn_and_the_first_rung_with_a_match_decides() {
        assert_eq!(at(&["foo", "bar", "baz"], &["bar", "baz"], 0, false), Some((1, Fuzz::Exact)));
        assert_eq!(at(&["foo   ", "bar\t\t"], &["foo", "bar"], 0, false), Some((0, Fuzz::TrailingWhitespace)));
        assert_eq!(at(&["    foo   ", "   bar\t"], &["foo", "bar"], 0, false), Some((0, Fuzz::Whitespace)));
        let line = "import asyncio  # local import \u{2013} avoids top\u{2011}level dep";
        assert_eq!(
            at(&[line], &["import asyncio  # local import - avoids top-level dep"], 0, false),
            Some((0, Fuzz::Punctuation))
        );
        assert_eq!(at(&["\u{201C}hi\u{201D}\u{00A0}x"], &["\"hi\" x"], 0, false), Some((0, Fuzz::Punctuation)));
        // A looser match earlier loses to an exact one later.
        assert_eq!(at(&["a ", "a"], &["a"], 0, false), Some((1, Fuzz::Exact)));
    }

    #[test]
    fn searches_forward_from_start_and_end_of_file_hunks_only_at_the_end() {
        let lines = ["x", "a", "x", "a"];
        assert_eq!(at(&lines, &["a"], 0, false), Some((1, Fuzz::Exact)));
        assert_eq!(at(&lines, &["a"], 2, false), Some((3, Fuzz::Exact)));
        assert_eq!(at(&lines, &["x"], 3, false), None);
        assert_eq!(at(&lines, &["x", "a"], 0, true), Some((2, Fuzz::Exact)));
        assert_eq!(at(&lines, &["a", "x"], 0, true), None);
        assert_eq!(at(&lines, &[], 2, false), Some((2, Fuzz::Exact)));
        assert_eq!(at(&["one"], &["too", "many"], 0, false), None);
        assert_eq!(at(&lines, &["a"], 9, false), None);
    }
}
