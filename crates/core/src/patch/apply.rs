//! The hunks of an update applied to a text, as Codex places them (each hunk found from
//! where the one before ended, a hunk without old lines added at the end, the file ended
//! by a line break), but in the file's own bytes: every line keeps its own line ending,
//! added lines take the file's usual one, and a context line keeps the file's text even
//! when it matched only on a looser rung (Codex writes the patch's version back).

use std::ops::Range;

use super::parse::{Chunk, ChunkLine, LineKind};
use super::seek::{seek, Fuzz, Lines};
use crate::edit::{candidates, Candidate};

/// A text with the hunks applied.
#[derive(Debug)]
pub(crate) struct Applied {
    pub text: String,
    /// Each replacement as (old range, new range) of bytes, in order: for a diff.
    pub spans: Vec<(Range<usize>, Range<usize>)>,
    /// Lines added and removed.
    pub added: usize,
    pub removed: usize,
    /// The loosest rung any hunk needed.
    pub fuzz: Fuzz,
}

/// Why the hunks of an update could not be placed in the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HunkMiss {
    /// The `@@` line of a hunk names a line the file does not have after the hunks before.
    Context {
        /// The hunk, 0-based.
        chunk: usize,
        /// The `@@` line's 1-based line in the patch.
        line: usize,
        /// The text after `@@ `.
        text: String,
        /// The lines of the file most like it.
        candidates: Vec<Candidate>,
    },
    /// A context or removed line of a hunk is not in the file after the lines before it.
    Lines {
        /// The hunk, 0-based.
        chunk: usize,
        /// The first line of the hunk not found: its 1-based line in the patch.
        line: usize,
        /// Its text (without the marker).
        text: String,
        /// Where the lines of the hunk before it were found (1-based line of the file), if
        /// there are any.
        after: Option<usize>,
        /// The hunk's lines are all there, but not at the end of the file, where
        /// `*** End of File` puts them.
        not_at_end: bool,
        /// The lines of the file most like the missing one.
        candidates: Vec<Candidate>,
    },
    /// A hunk would change lines an earlier hunk of the same file changes.
    Overlap {
        /// The hunk, 0-based.
        chunk: usize,
        /// Its 1-based line in the patch.
        line: usize,
    },
}

/// A line of the file: its text and its line ending ("\r\n", "\n", or "" for a last line
/// without one).
struct FileLine<'a> {
    text: &'a str,
    ending: &'a str,
}

/// What a replacement puts in: a line of the file kept as it is, or a line of the patch.
enum New<'p> {
    Keep(usize),
    Add(&'p str),
}

struct Replacement<'p> {
    start: usize,
    old_len: usize,
    new: Vec<New<'p>>,
    chunk: usize,
}

/// Applies `chunks` to `text` (decoded, without a BOM).
pub(crate) fn apply_chunks(text: &str, chunks: &[Chunk]) -> Result<Applied, HunkMiss> {
    let file = split(text);
    let lines = Lines::new(file.iter().map(|l| l.text).collect());
    let crlf = file.iter().filter(|l| l.ending == "\r\n").count();
    let lf = file.iter().filter(|l| l.ending == "\n").count();
    let usual = if crlf > lf { "\r\n" } else { "\n" };

    let mut fuzz = Fuzz::Exact;
    let mut reps: Vec<Replacement<'_>> = Vec::with_capacity(chunks.len());
    let mut next = 0;
    for (ci, chunk) in chunks.iter().enumerate() {
        if let Some(context) = &chunk.context {
            let Some((at, f)) = seek(&lines, &[context.as_str()], next, false) else {
                return Err(HunkMiss::Context {
                    chunk: ci,
                    line: chunk.line,
                    text: context.clone(),
                    candidates: candidates(text, context),
                });
            };
            fuzz = fuzz.max(f);
            next = at + 1;
        }
        let old: Vec<&str> = chunk.old_lines().map(|l| l.text.as_str()).collect();
        if old.is_empty() {
            // Codex adds a hunk of added lines only at the end of the file (before a last
            // empty line).
            let at = if file.last().is_some_and(|l| l.text.is_empty()) { file.len() - 1 } else { file.len() };
            let new = chunk.lines.iter().map(|l| New::Add(&l.text)).collect();
            reps.push(Replacement { start: at, old_len: 0, new, chunk: ci });
            continue;
        }
        let mut pattern = &old[..];
        let mut found = seek(&lines, pattern, next, chunk.end_of_file);
        let mut trimmed = false;
        if found.is_none() && pattern.last() == Some(&"") {
            // A last empty line stands for the file's final line break: try without it.
            pattern = &pattern[..pattern.len() - 1];
            trimmed = true;
            found = seek(&lines, pattern, next, chunk.end_of_file);
        }
        let Some((start, f)) = found else { return Err(miss(text, &lines, chunk, ci, &old, next)) };
        fuzz = fuzz.max(f);
        let mut new = Vec::with_capacity(chunk.lines.len());
        let mut j = 0;
        for line in &chunk.lines {
            match line.kind {
                LineKind::Context if j < pattern.len() => new.push(New::Keep(start + j)),
                LineKind::Context | LineKind::Added => new.push(New::Add(&line.text)),
                LineKind::Removed => {}
            }
            if line.kind != LineKind::Added {
                j += 1;
            }
        }
        if trimmed {
            // As Codex drops the last new line with the old one when it is empty.
            // (Each context or added line gave one new line, so the last is the last of them.)
            if chunk.lines.iter().rev().find(|l| l.kind != LineKind::Removed).is_some_and(|l| l.text.is_empty()) {
                new.pop();
            }
        }
        reps.push(Replacement { start, old_len: pattern.len(), new, chunk: ci });
        next = start + pattern.len();
    }
    reps.sort_by_key(|r| r.start);
    for pair in reps.windows(2) {
        if pair[1].start < pair[0].start + pair[0].old_len {
            let chunk = pair[0].chunk.max(pair[1].chunk);
            return Err(HunkMiss::Overlap { chunk, line: chunks[chunk].line });
        }
    }
    Ok(splice(text, &file, &reps, usual, fuzz))
}

/// Builds the new text: the file's lines outside the replacements as they are, the
/// replacements' lines, and every line ended (the last one too, as Codex ends a file).
fn splice(text: &str, file: &[FileLine<'_>], reps: &[Replacement<'_>], usual: &str, fuzz: Fuzz) -> Applied {
    let mut starts = Vec::with_capacity(file.len() + 1);
    let mut at = 0;
    for line in file {
        starts.push(at);
        at += line.text.len() + line.ending.len();
    }
    starts.push(at);
    let mut out = String::with_capacity(text.len() + reps.iter().map(|r| r.new.len() * 16).sum::<usize>());
    let mut spans = Vec::with_capacity(reps.len() + 1);
    let (mut added, mut removed, mut copied) = (0, 0, 0);
    let ended = |out: &mut String| {
        if !out.is_empty() && !out.ends_with('\n') {
            out.push_str(usual);
        }
    };
    for rep in reps {
        out.push_str(&text[starts[copied]..starts[rep.start]]);
        ended(&mut out);
        let from = out.len();
        let mut kept = 0;
        for new in &rep.new {
            match new {
                New::Keep(i) => {
                    out.push_str(file[*i].text);
                    out.push_str(if file[*i].ending.is_empty() { usual } else { file[*i].ending });
                    kept += 1;
                }
                New::Add(line) => {
                    out.push_str(line);
                    out.push_str(usual);
                    added += 1;
                }
            }
        }
        removed += rep.old_len - kept;
        spans.push((starts[rep.start]..starts[rep.start + rep.old_len], from..out.len()));
        copied = rep.start + rep.old_len;
    }
    out.push_str(&text[starts[copied]..]);
    if !out.is_empty() && !out.ends_with('\n') {
        let end = out.len();
        out.push_str(usual);
        match spans.last_mut() {
            Some((old, new)) if old.end == text.len() && new.end == end => new.end = out.len(),
            _ => spans.push((text.len()..text.len(), end..out.len())),
        }
    }
    Applied { text: out, spans, added, removed, fuzz }
}

/// The error for a hunk whose lines were not found: the first of its old lines that is not
/// there after the ones before it.
fn miss(text: &str, lines: &Lines<'_>, chunk: &Chunk, ci: usize, old: &[&str], next: usize) -> HunkMiss {
    let olds: Vec<&ChunkLine> = chunk.old_lines().collect();
    let mut after = None;
    for k in 1..=old.len() {
        match seek(lines, &old[..k], next, false) {
            Some((at, _)) => after = Some(at + 1),
            None => {
                let missing = olds[k - 1];
                return HunkMiss::Lines {
                    chunk: ci,
                    line: missing.line,
                    text: missing.text.clone(),
                    after: if k > 1 { after } else { None },
                    not_at_end: false,
                    candidates: candidates(text, &missing.text),
                };
            }
        }
    }
    // Every line is there: only not at the end, where `*** End of File` wants them.
    HunkMiss::Lines {
        chunk: ci,
        line: chunk.line,
        text: old[0].to_owned(),
        after,
        not_at_end: true,
        candidates: Vec::new(),
    }
}

/// The lines of a text with their endings; a '\r' before a '\n' belongs to the ending.
fn split(text: &str) -> Vec<FileLine<'_>> {
    let mut out = Vec::with_capacity(memchr::memchr_iter(b'\n', text.as_bytes()).count() + 1);
    let mut start = 0;
    for end in memchr::memchr_iter(b'\n', text.as_bytes()) {
        let line = &text[start..end];
        match line.strip_suffix('\r') {
            Some(body) => out.push(FileLine { text: body, ending: &text[end - 1..=end] }),
            None => out.push(FileLine { text: line, ending: &text[end..=end] }),
        }
        start = end + 1;
    }
    if start < text.len() {
        out.push(FileLine { text: &text[start..], ending: "" });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::parse::parse_patch;
    use super::super::PatchOp;
    use super::*;

    /// The hunks of a one-file update patch body.
    fn chunks(body: &str) -> Vec<Chunk> {
        let patch = parse_patch(&format!("*** Begin Patch\n*** Update File: f\n{body}\n*** End Patch")).unwrap();
        match patch.ops.into_iter().next().unwrap() {
            PatchOp::Update { chunks, .. } => chunks,
            _ => unreachable!(),
        }
    }

    fn apply(text: &str, body: &str) -> String {
        apply_chunks(text, &chunks(body)).unwrap().text
    }

    #[test]
    fn replaces_adds_and_removes_in_place_and_ends_the_file() {
        assert_eq!(apply("foo\nbar\n", "@@\n foo\n-bar\n+baz"), "foo\nbaz\n");
        assert_eq!(
            apply("a\nb\nc\nd\ne\nf\n", "@@\n a\n-b\n+B\n@@\n c\n d\n-e\n+E\n@@\n f\n+g\n*** End of File"),
            "a\nB\nc\nd\nE\nf\ng\n"
        );
        assert_eq!(
            apply("no newline at end", "@@\n-no newline at end\n+first line\n+second line"),
            "first line\nsecond line\n"
        );
        assert_eq!(apply("keep\nlast", "@@\n-keep\n+kept"), "kept\nlast\n");
        // Hunks of added lines only go to the end, before a last empty line.
        assert_eq!(apply("line1\nline2\n", "@@\n+added"), "line1\nline2\nadded\n");
        assert_eq!(apply("a\n\n", "@@\n+x"), "a\nx\n\n");
        assert_eq!(
            apply("line1\nline2\nline3\n", "@@\n+after\n+second\n@@\n line1\n-line2\n-line3\n+repl"),
            "line1\nrepl\nafter\nsecond\n"
        );
        assert_eq!(apply("", "@@\n+first"), "first\n");
    }

    #[test]
    fn keeps_each_lines_own_ending_and_gives_added_lines_the_usual_one() {
        assert_eq!(apply("a\r\nb\r\nc\r\n", "@@\n a\n-b\n+B\n+B2\n c"), "a\r\nB\r\nB2\r\nc\r\n");
        // A mixed file: the kept lines keep theirs; added ones take the more common one.
        assert_eq!(apply("a\r\nb\nc\r\nd\r\n", "@@\n-a\n+A\n b"), "A\r\nb\nc\r\nd\r\n");
        assert_eq!(apply("x\r\ny", "@@\n x\n+z"), "x\r\nz\r\ny\r\n");
        // A lone '\r' inside a line is content.
        assert_eq!(apply("p\rq\nr\n", "@@\n-r\n+s"), "p\rq\ns\n");
    }

    #[test]
    fn context_lines_keep_the_files_bytes_when_they_matched_loosely() {
        let got = apply_chunks("  \u{201C}hi\u{201D}  \nold\n", &chunks("@@\n \"hi\"\n-old\n+new")).unwrap();
        assert_eq!(got.text, "  \u{201C}hi\u{201D}  \nnew\n");
        assert_eq!(got.fuzz, Fuzz::Punctuation);
        assert_eq!((got.added, got.removed), (1, 1));
    }

    #[test]
    fn the_at_at_header_narrows_the_search_and_end_of_file_hunks_match_only_at_the_end() {
        let text = "fn a() {\n    x\n}\nfn b() {\n    x\n}\n";
        assert_eq!(apply(text, "@@ fn b() {\n-    x\n+    y"), "fn a() {\n    x\n}\nfn b() {\n    y\n}\n");
        assert_eq!(apply("x\ny\nx\n", "@@\n-x\n+z\n*** End of File"), "x\ny\nz\n");
        let e = apply_chunks("x\ny\n", &chunks("@@\n-x\n+z\n*** End of File")).unwrap_err();
        assert!(matches!(e, HunkMiss::Lines { not_at_end: true, .. }), "{e:?}");
    }

    #[test]
    fn a_trailing_empty_line_stands_for_the_final_line_break() {
        assert_eq!(apply("foo\nbar\n", "@@\n foo\n-bar\n+BAR\n"), "foo\nBAR\n");
    }

    #[test]
    fn misses_name_the_first_line_not_found_with_the_closest_lines() {
        let text = "alpha\nbeta\ngamma\ndelta\n";
        match apply_chunks(text, &chunks("@@\n alpha\n beta\n-gamm4\n+g")).unwrap_err() {
            HunkMiss::Lines { chunk, line, text, after, candidates, not_at_end } => {
                assert_eq!((chunk, line, text.as_str(), after, not_at_end), (0, 6, "gamm4", Some(1), false));
                assert_eq!(candidates[0].line, 3);
            }
            other => panic!("{other:?}"),
        }
        match apply_chunks(text, &chunks("@@ nothing like it\n-alpha\n+a")).unwrap_err() {
            HunkMiss::Context { line, text, .. } => assert_eq!((line, text.as_str()), (3, "nothing like it")),
            other => panic!("{other:?}"),
        }
        // A second hunk is looked for after the first.
        assert!(matches!(
            apply_chunks(text, &chunks("@@\n-gamma\n+g\n@@\n-alpha\n+a")).unwrap_err(),
            HunkMiss::Lines { chunk: 1, .. }
        ));
    }

    #[test]
    fn hunks_that_would_change_the_same_lines_are_refused() {
        let e = apply_chunks("a\nb\nc\n", &chunks("@@\n a\n-b\n+B\n@@\n-b\n+C\n c\n*** End of File")).unwrap_err();
        assert!(matches!(e, HunkMiss::Overlap { chunk: 1, .. }), "{e:?}");
    }

    #[test]
    fn spans_cover_each_replacement_and_the_added_final_line_break() {
        let got = apply_chunks("a\nb\nc", &chunks("@@\n-a\n+A")).unwrap();
        assert_eq!(got.text, "A\nb\nc\n");
        assert_eq!(got.spans, vec![(0..2, 0..2), (5..5, 5..6)]);
        let got = apply_chunks("a\nb", &chunks("@@\n a\n-b\n+B")).unwrap();
        assert_eq!(got.spans, vec![(0..3, 0..4)]);
    }
}
