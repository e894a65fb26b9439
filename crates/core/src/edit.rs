//! Edit: find `old_string` in a text on a ladder of ever looser comparisons, put
//! `new_string` in its place in the text's own style, and describe the change as a
//! numbered snippet and a unified diff.
//!
//! Why a ladder and no fuzzy rung: a model's copy of a file drifts from the bytes on
//! disk in a few known ways (CRLF read as LF, curly quotes typed straight, tags the
//! transport sanitized, trailing blanks lost). Each rung folds one more of those away on
//! both sides and searches again; the first rung on which `old_string` occurs at all
//! decides. A near miss that no fold explains is reported with the closest lines, never
//! applied.
//!
//! Why a sparse offset map: a match found on a folded text must name exact byte offsets
//! of the original, so everything outside the span is written back untouched. Folding
//! only ever changes a few bytes per line, so a folded text is kept as the folded
//! `String` plus a sorted list of the places that changed; an offset is mapped back by a
//! binary search over that list. Files of 10 MiB and more cost one extra copy per rung,
//! not a map entry per byte.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::ops::Range;

use memchr::{memchr, memchr2_iter, memchr_iter, memmem, memrchr};

use crate::page::group;

/// The rung of the matching ladder that found old_string.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rung {
    /// The bytes of old_string occur as they are.
    Exact,
    /// Found once "\r\n" is folded to "\n" on both sides (and a leading BOM of
    /// old_string is dropped).
    LineEndings,
    /// Found once curly quotes are also folded to straight ones on both sides.
    Quotes,
    /// Found once sanitized tags in old_string (`<fnr>` and the rest of that table) are
    /// also mapped back to their real form; the same mapping is applied to new_string.
    Desanitized,
    /// Found once trailing spaces and tabs of every line are also ignored on both sides.
    /// old_string is tried as it is first, then desanitized (and new_string with it).
    TrailingWhitespace,
}

impl Rung {
    /// The rung's stable name: "exact", "line-endings", "quotes", "desanitized" or
    /// "trailing-whitespace".
    pub fn name(self) -> &'static str {
        match self {
            Rung::Exact => "exact",
            Rung::LineEndings => "line-endings",
            Rung::Quotes => "quotes",
            Rung::Desanitized => "desanitized",
            Rung::TrailingWhitespace => "trailing-whitespace",
        }
    }

    fn folds_quotes(self) -> bool {
        matches!(self, Rung::Quotes | Rung::Desanitized | Rung::TrailingWhitespace)
    }
}

/// One edit request.
#[derive(Clone, Copy, Debug)]
pub struct EditSpec<'a> {
    /// The text to find (old_string). Empty means "fill an empty text".
    pub old: &'a str,
    /// The text to put in its place (new_string).
    pub new: &'a str,
    /// Replace every occurrence instead of requiring exactly one.
    pub replace_all: bool,
    /// Strip trailing whitespace from new_string's lines (false for .md/.mdx).
    pub strip_trailing_whitespace: bool,
}

/// A successful edit.
#[derive(Clone, Debug)]
pub struct Edited {
    /// The whole new text.
    pub text: String,
    /// The rung that found old_string ([`Rung::Exact`] when old_string was empty).
    pub rung: Rung,
    /// Replacements made.
    pub count: usize,
    /// For each replacement in order: its byte range in the old text and in the new text.
    ///
    /// Outside these ranges the two texts are identical. When the final-newline rule
    /// added or removed a line break at the end, the last pair is widened to cover it
    /// (and, if that break began inside an earlier replacement, the two are merged).
    pub spans: Vec<(Range<usize>, Range<usize>)>,
}

/// Why an edit was not made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EditFailure {
    /// old == new (checked first, on the raw strings), or the edit, once new_string was
    /// shaped to the text's style, would leave the text as it was.
    NoChange,
    /// old_string is "" but the text is not empty.
    NotEmpty,
    /// No rung found old_string.
    NotFound {
        /// Up to 3 lines closest to old_string's first non-blank line, best first.
        candidates: Vec<Candidate>,
    },
    /// The first rung that found old_string found it `count` (>1) times and
    /// replace_all was false.
    Ambiguous {
        /// Non-overlapping occurrences on that rung.
        count: usize,
        /// The rung that found them.
        rung: Rung,
    },
    /// An insertion after a line the text does not have ([`insert_lines`]).
    LineOutOfRange {
        /// The lines the text has.
        lines: usize,
    },
}

/// A line of the text that resembles old_string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// The line's number, 1-based.
    pub line: usize,
    /// The line (without its line break), cut to 200 chars at a char boundary.
    pub text: String,
}

/// Applies one edit to `text` (already decoded, BOM removed).
///
/// old_string is searched for on the rungs of [`Rung`] in order; the first rung on which
/// it occurs decides. new_string is then shaped to the text before it is inserted: the
/// desanitize mapping when that rung matched, curly quotes where the replaced span had
/// them (rung [`Rung::Quotes`] and later), the line breaks of the text (CRLF in a mostly-CRLF text, else LF),
/// trailing whitespace stripped when asked (the last line's only when the span ends at a
/// line end), and the text's final-newline state kept when the edit reaches the end.
pub fn apply_edit(text: &str, spec: &EditSpec) -> Result<Edited, EditFailure> {
    if spec.old == spec.new {
        return Err(EditFailure::NoChange);
    }
    if spec.old.is_empty() {
        if !text.is_empty() {
            return Err(EditFailure::NotEmpty);
        }
        let mut new = if spec.strip_trailing_whitespace { strip_trailing(spec.new, true) } else { spec.new.to_owned() };
        // A new file gets LF line endings, as a whole-file write stores them.
        if new.contains("\r\n") {
            new = new.replace("\r\n", "\n");
        }
        if new.is_empty() {
            return Err(EditFailure::NoChange);
        }
        let len = new.len();
        return Ok(Edited { text: new, rung: Rung::Exact, count: 1, spans: vec![(0..0, 0..len)] });
    }
    let Some(found) = locate(text, spec.old) else {
        return Err(EditFailure::NotFound { candidates: candidates(text, spec.old) });
    };
    if found.spans.len() > 1 && !spec.replace_all {
        return Err(EditFailure::Ambiguous { count: found.spans.len(), rung: found.rung });
    }

    let new = if found.desanitized {
        desanitize(spec.new).map_or(Cow::Borrowed(spec.new), Cow::Owned)
    } else {
        spec.new.into()
    };
    let mut shaper = Shaper {
        crlf: new.contains('\n') && crlf_dominant(text),
        new,
        strip: spec.strip_trailing_whitespace,
        shaped: Default::default(),
    };
    let mut out = String::with_capacity(text.len() + shaper.new.len());
    let mut spans = Vec::with_capacity(found.spans.len());
    let mut copied = 0;
    for span in &found.spans {
        out.push_str(&text[copied..span.start]);
        let (double, single) =
            if found.rung.folds_quotes() { curly_kinds(&text[span.clone()]) } else { (false, false) };
        let start = out.len();
        let opens_before = opens(text[..span.start].chars().next_back());
        out.push_str(shaper.shape(double, single, at_line_end(text, span.end), opens_before));
        spans.push((span.clone(), start..out.len()));
        copied = span.end;
    }
    out.push_str(&text[copied..]);

    if copied == text.len() {
        keep_final_newline(text, &mut out, &mut spans);
    }
    if out == text {
        return Err(EditFailure::NoChange);
    }
    Ok(Edited { text: out, rung: found.rung, count: found.spans.len(), spans })
}

/// Inserts `new` as whole lines after line `after` of `text` (0: before the first line),
/// in the text's line endings (CRLF in a mostly-CRLF text): the inserted lines end with a
/// line break, except at the end of a text that has no final one, which stays without.
/// Empty `new` is [`EditFailure::NoChange`]; a line past the end
/// [`EditFailure::LineOutOfRange`].
pub fn insert_lines(text: &str, after: usize, new: &str) -> Result<Edited, EditFailure> {
    let lines = count_lines(text);
    if after > lines {
        return Err(EditFailure::LineOutOfRange { lines });
    }
    if new.is_empty() {
        return Err(EditFailure::NoChange);
    }
    let ending = if crlf_dominant(text) { "\r\n" } else { "\n" };
    let mut shaped = if ending == "\r\n" { to_crlf(new) } else { new.replace("\r\n", "\n") };
    let mut at = 0;
    for _ in 0..after {
        at = line_end(text, at);
    }
    let unended = at == text.len() && !text.is_empty() && !text.ends_with('\n');
    if unended {
        // After a last line without a line break: it gets one, and the text still ends without.
        shaped = format!("{ending}{}", shaped.strip_suffix(ending).unwrap_or(&shaped));
    } else if !shaped.ends_with('\n') {
        shaped.push_str(ending);
    }
    let mut out = String::with_capacity(text.len() + shaped.len());
    out.push_str(&text[..at]);
    out.push_str(&shaped);
    out.push_str(&text[at..]);
    Ok(Edited { text: out, rung: Rung::Exact, count: 1, spans: vec![(at..at, at..at + shaped.len())] })
}

/// A unified diff (`--- a/label`, `+++ b/label`, `@@ -l,n +l,n @@` hunks with `context`
/// lines) built directly from the spans of an edit: no diff algorithm runs, the spans
/// say what changed (each is widened to whole lines; lines equal on both sides at the
/// edges of a change are shown as context).
///
/// Hunks whose context would touch or overlap are merged. Headers follow GNU diff: a
/// count of 1 is left out (`@@ -7 +7 @@`) and an empty range names the line before it.
/// Lines are split on '\n'; a trailing '\r' is kept out of the display. A last line
/// without a line break is followed by "\ No newline at end of file". At most
/// `max_lines` lines of hunk bodies are written (the `@@` headers and the no-newline
/// markers do not count), then a line "… diff cut at N lines". No spans, no diff: "".
pub fn unified_diff(
    old: &str,
    new: &str,
    spans: &[(Range<usize>, Range<usize>)],
    label: &str,
    context: usize,
    max_lines: usize,
) -> String {
    let blocks = blocks(old, new, spans);
    if blocks.is_empty() {
        return String::new();
    }
    let (mut old_lines, mut new_lines) = (LineCursor::new(old), LineCursor::new(new));
    let blocks: Vec<Block> = blocks
        .into_iter()
        .map(|(o, n)| Block {
            old_line: old_lines.line_at(o.start),
            new_line: new_lines.line_at(n.start),
            old_count: count_lines(&old[o.clone()]),
            new_count: count_lines(&new[n.clone()]),
            old: o,
            new: n,
        })
        .collect();

    let mut body = Body { out: format!("--- a/{label}\n+++ b/{label}\n"), left: max_lines, max_lines, cut: false };
    let mut i = 0;
    while i < blocks.len() && !body.cut {
        let mut j = i + 1;
        while j < blocks.len()
            && blocks[j].old_line - (blocks[j - 1].old_line + blocks[j - 1].old_count) <= context.saturating_mul(2)
        {
            j += 1;
        }
        let (first, last) = (&blocks[i], &blocks[j - 1]);
        let (before_at, before) = back_lines(old, first.old.start, context);
        let (after_at, after) = forward_lines(old, last.old.end, context);
        let old_start = first.old_line - before;
        let new_start = first.new_line - before;
        let old_count = last.old_line + last.old_count + after - old_start;
        let new_count = last.new_line + last.new_count + after - new_start;
        let _ = writeln!(body.out, "@@ -{} +{} @@", hunk_range(old_start, old_count), hunk_range(new_start, new_count));
        body.lines(' ', &old[before_at..first.old.start]);
        for k in i..j {
            if k > i {
                body.lines(' ', &old[blocks[k - 1].old.end..blocks[k].old.start]);
            }
            body.lines('-', &old[blocks[k].old.clone()]);
            body.lines('+', &new[blocks[k].new.clone()]);
        }
        body.lines(' ', &old[last.old.end..after_at]);
        i = j;
    }
    body.out
}

/// The edited region of the new text with line numbers in `cat -n` form (number
/// right-aligned in 6 columns, a tab, the line; '\r' stripped): the lines of each
/// replacement with `context` lines around them, groups that do not touch separated by a
/// line "...".
///
/// At most `max_lines` numbered lines are written (the "..." separators do not count),
/// then a line "… N more lines not shown". A shown line longer than 2000 chars is cut at
/// a char boundary with the same marker the read tool uses. No spans or an empty text: "".
pub fn snippet(new: &str, spans: &[(Range<usize>, Range<usize>)], context: usize, max_lines: usize) -> String {
    if new.is_empty() || spans.is_empty() {
        return String::new();
    }
    let last_line = count_lines(new) - 1;
    let mut lines = LineCursor::new(new);
    let mut groups: Vec<(usize, usize)> = Vec::new();
    for (_, span) in spans {
        let first = lines.line_at(span.start).min(last_line);
        // An inserted text that ends with its line break does not reach into the next line.
        let end = if span.end > span.start && new.as_bytes()[span.end - 1] == b'\n' { span.end - 1 } else { span.end };
        let last = lines.line_at(end).min(last_line);
        let (from, to) = (first.saturating_sub(context), last.saturating_add(context).min(last_line));
        match groups.last_mut() {
            Some(g) if from <= g.1 + 1 => g.1 = g.1.max(to),
            _ => groups.push((from, to)),
        }
    }

    let wanted: usize = groups.iter().map(|g| g.1 - g.0 + 1).sum();
    let mut out = String::new();
    let (mut shown, mut pos, mut line) = (0, 0, 0);
    for (k, &(from, to)) in groups.iter().enumerate() {
        while line < from {
            pos = line_end(new, pos);
            line += 1;
        }
        while line <= to {
            if shown == max_lines {
                let _ = writeln!(out, "… {} more lines not shown", group((wanted - shown) as u64));
                return out;
            }
            if k > 0 && line == from {
                out.push_str("...\n");
            }
            let end = line_end(new, pos);
            let text = display(&new[pos..end]);
            let _ = write!(out, "{:>6}\t", line + 1);
            match text.char_indices().nth(SNIPPET_LINE_CHARS) {
                Some((at, _)) => {
                    let more = text[at..].chars().count() as u64;
                    let _ = writeln!(out, "{} … [line cut: {} more characters]", &text[..at], group(more));
                }
                None => {
                    out.push_str(text);
                    out.push('\n');
                }
            }
            shown += 1;
            pos = end;
            line += 1;
        }
    }
    out
}

/// Chars of a snippet line shown before it is cut.
const SNIPPET_LINE_CHARS: usize = 2000;
/// Candidate lines reported when old_string is not found.
const CANDIDATES: usize = 3;
/// Chars of a line (and of old_string's first line) compared, and shown in a candidate.
const CANDIDATE_CHARS: usize = 200;
/// The least similarity for a line to be a candidate.
const CANDIDATE_SCORE: f64 = 0.5;

/// Sanitized forms and the real forms they stand for. No entry is a prefix of another
/// entry's sanitized form, so one left-to-right pass maps them all.
pub(crate) const SANITIZED: &[(&str, &str)] = &[
    ("<fnr>", "<function_results>"),
    ("</fnr>", "</function_results>"),
    ("<n>", "<name>"),
    ("</n>", "</name>"),
    ("<o>", "<output>"),
    ("</o>", "</output>"),
    ("<e>", "<error>"),
    ("</e>", "</error>"),
    ("<s>", "<system>"),
    ("</s>", "</system>"),
    ("<r>", "<result>"),
    ("</r>", "</result>"),
    ("< META_START >", "<META_START>"),
    ("< META_END >", "<META_END>"),
    ("< EOT >", "<EOT>"),
    ("< META >", "<META>"),
    ("< SOS >", "<SOS>"),
    ("\n\nH:", "\n\nHuman:"),
    ("\n\nA:", "\n\nAssistant:"),
];

/// Where old_string was found: the rung, and each occurrence as a range of the original.
struct Found {
    rung: Rung,
    spans: Vec<Range<usize>>,
    /// old_string matched only in its desanitized form, so new_string is desanitized too.
    desanitized: bool,
}

/// Walks the ladder. Each rung folds the text one step further than the last (a new
/// layer over the previous one) and is searched only if the fold changed the text or the
/// needle; otherwise it would repeat the previous rung's search.
fn locate(text: &str, old: &str) -> Option<Found> {
    let mut ladder = Ladder { text, layers: Vec::new() };
    let bytes = text.as_bytes();
    let found = |rung, mut spans: Vec<Range<usize>>, desanitized| {
        // A model never sees the '\r' of a CRLF (a read shows lines), so a match that
        // starts at the '\n' of one takes its '\r' along rather than split the pair,
        // unless the match before it ends with that '\r'.
        let mut before = 0;
        for span in &mut spans {
            if span.start > before && bytes[span.start] == b'\n' && bytes[span.start - 1] == b'\r' {
                span.start -= 1;
            }
            before = span.end;
        }
        (!spans.is_empty()).then_some(Found { rung, spans, desanitized })
    };
    if let Some(f) = found(Rung::Exact, ladder.find(old), false) {
        return Some(f);
    }

    let mut needle = folded(old, fold_crlf);
    if let Some(rest) = needle.strip_prefix('\u{feff}') {
        needle = rest.to_owned();
    }
    let text_changed = ladder.fold(fold_crlf);
    if text_changed || needle != old {
        if let Some(f) = found(Rung::LineEndings, ladder.find(&needle), false) {
            return Some(f);
        }
    }

    let quoted = folded(&needle, fold_quotes);
    let text_changed = ladder.fold(fold_quotes);
    if text_changed || quoted != needle {
        if let Some(f) = found(Rung::Quotes, ladder.find(&quoted), false) {
            return Some(f);
        }
    }
    let needle = quoted;

    // The text may hold the sanitized form literally (`<s>` is HTML), so the plain
    // needle keeps priority on the last rung too.
    let real = desanitize(&needle);
    if let Some(real) = &real {
        if let Some(f) = found(Rung::Desanitized, ladder.find(real), true) {
            return Some(f);
        }
    }

    let text_changed = ladder.fold(fold_trailing);
    let plain = folded(&needle, fold_trailing);
    if text_changed || plain != needle {
        if let Some(f) = found(Rung::TrailingWhitespace, ladder.find(&plain), false) {
            return Some(f);
        }
    }
    let real = real?;
    let trimmed = folded(&real, fold_trailing);
    if text_changed || trimmed != real {
        return found(Rung::TrailingWhitespace, ladder.find(&trimmed), true);
    }
    None
}

/// The text and the folds applied to it so far, each a layer over the one before.
struct Ladder<'a> {
    text: &'a str,
    layers: Vec<Folded>,
}

impl Ladder<'_> {
    fn current(&self) -> &str {
        self.layers.last().map_or(self.text, |l| &l.text)
    }

    /// Folds the current text one step further; false if the fold changed nothing.
    fn fold(&mut self, fold: fn(&str) -> Option<Folded>) -> bool {
        match fold(self.current()) {
            Some(layer) => {
                self.layers.push(layer);
                true
            }
            None => false,
        }
    }

    /// Non-overlapping occurrences of `needle` in the current text, left to right, as
    /// ranges of the original text.
    fn find(&self, needle: &str) -> Vec<Range<usize>> {
        if needle.is_empty() {
            return Vec::new();
        }
        memmem::find_iter(self.current().as_bytes(), needle.as_bytes())
            .map(|at| {
                let (mut start, mut end) = (at, at + needle.len());
                for layer in self.layers.iter().rev() {
                    start = layer.start(start);
                    end = layer.end(end);
                }
                start..end
            })
            .collect()
    }
}

/// A folded text and the places where it differs from the text it was folded from.
struct Folded {
    text: String,
    /// Sorted by position. A deletion has an empty `norm` range; a replacement's `norm`
    /// range is one byte, so no match can start or end inside it.
    deltas: Vec<Delta>,
}

/// The bytes `orig` of the unfolded text became the bytes `norm` of the folded one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Delta {
    orig_start: usize,
    orig_end: usize,
    norm_start: usize,
    norm_end: usize,
}

impl Folded {
    /// Maps the start of a match back: after anything deleted at that point (a trailing
    /// blank just before the match is not part of it).
    fn start(&self, at: usize) -> usize {
        let i = self.deltas.partition_point(|d| d.norm_start <= at);
        self.map(i, at)
    }

    /// Maps the end of a match back: before anything deleted at that point (trailing
    /// blanks after the matched text stay in the file, outside the span).
    fn end(&self, at: usize) -> usize {
        let i = self.deltas.partition_point(|d| d.norm_start < at);
        self.map(i, at)
    }

    fn map(&self, i: usize, at: usize) -> usize {
        match i.checked_sub(1).map(|i| self.deltas[i]) {
            None => at,
            Some(d) if at >= d.norm_end => d.orig_end + (at - d.norm_end),
            Some(d) => d.orig_start,
        }
    }
}

/// Builds a [`Folded`] from left-to-right replacements of a source text.
struct FoldBuilder<'a> {
    src: &'a str,
    out: String,
    deltas: Vec<Delta>,
    copied: usize,
}

impl<'a> FoldBuilder<'a> {
    fn new(src: &'a str) -> FoldBuilder<'a> {
        FoldBuilder { src, out: String::with_capacity(src.len()), deltas: Vec::new(), copied: 0 }
    }

    fn replace(&mut self, orig: Range<usize>, with: &str) {
        self.out.push_str(&self.src[self.copied..orig.start]);
        let norm_start = self.out.len();
        self.out.push_str(with);
        self.copied = orig.end;
        // Neighbouring deletions collapse into one delta: with a single delta per point,
        // `start` and `end` cannot land between two of them.
        if let Some(last) = self.deltas.last_mut() {
            if with.is_empty()
                && last.norm_start == last.norm_end
                && last.norm_end == norm_start
                && last.orig_end == orig.start
            {
                last.orig_end = orig.end;
                return;
            }
        }
        self.deltas.push(Delta { orig_start: orig.start, orig_end: orig.end, norm_start, norm_end: self.out.len() });
    }

    fn finish(mut self) -> Option<Folded> {
        if self.deltas.is_empty() {
            return None;
        }
        self.out.push_str(&self.src[self.copied..]);
        Some(Folded { text: self.out, deltas: self.deltas })
    }
}

/// The folded form of `s`, or `s` itself if the fold changes nothing.
fn folded(s: &str, fold: fn(&str) -> Option<Folded>) -> String {
    fold(s).map_or_else(|| s.to_owned(), |f| f.text)
}

/// "\r\n" → "\n". The pair is replaced as a whole, so a match that starts or ends with
/// the line break takes the '\r' with it.
fn fold_crlf(s: &str) -> Option<Folded> {
    let mut b = FoldBuilder::new(s);
    for at in memmem::find_iter(s.as_bytes(), b"\r\n") {
        b.replace(at..at + 2, "\n");
    }
    b.finish()
}

/// U+2018–U+201B → '\'' and U+201C–U+201F → '"'. All eight are E2 80 98–9F in UTF-8.
fn fold_quotes(s: &str) -> Option<Folded> {
    let bytes = s.as_bytes();
    let mut b = FoldBuilder::new(s);
    for at in memmem::find_iter(bytes, b"\xE2\x80") {
        match bytes.get(at + 2) {
            Some(0x98..=0x9B) => b.replace(at..at + 3, "'"),
            Some(0x9C..=0x9F) => b.replace(at..at + 3, "\""),
            _ => {}
        }
    }
    b.finish()
}

/// Deletes spaces and tabs before every '\n' and at the end of the text.
fn fold_trailing(s: &str) -> Option<Folded> {
    let bytes = s.as_bytes();
    let mut b = FoldBuilder::new(s);
    for end in memchr_iter(b'\n', bytes).chain(std::iter::once(bytes.len())) {
        let start = end - trailing_blanks(&bytes[..end]);
        if start < end {
            b.replace(start..end, "");
        }
    }
    b.finish()
}

fn trailing_blanks(bytes: &[u8]) -> usize {
    bytes.iter().rev().take_while(|&&c| c == b' ' || c == b'\t').count()
}

/// Maps sanitized tags back to their real form; `None` if there are none.
fn desanitize(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = String::new();
    let mut copied = 0;
    for at in memchr2_iter(b'<', b'\n', bytes) {
        if at < copied {
            continue;
        }
        if let Some((from, to)) = SANITIZED.iter().find(|(from, _)| bytes[at..].starts_with(from.as_bytes())) {
            out.push_str(&s[copied..at]);
            out.push_str(to);
            copied = at + from.len();
        }
    }
    if copied == 0 {
        return None;
    }
    out.push_str(&s[copied..]);
    Some(out)
}

/// Which kinds of curly quote a span of the original holds: (double, single).
fn curly_kinds(span: &str) -> (bool, bool) {
    let bytes = span.as_bytes();
    let (mut double, mut single) = (false, false);
    for at in memmem::find_iter(bytes, b"\xE2\x80") {
        match bytes.get(at + 2) {
            Some(0x98..=0x9B) => single = true,
            Some(0x9C..=0x9F) => double = true,
            _ => {}
        }
    }
    (double, single)
}

/// Turns straight quotes of the kinds asked for into curly ones (seed 000
/// `preserveQuoteStyle`): a quote opens at the start or after whitespace or an opening
/// bracket or dash, and closes otherwise; a single quote between two letters is an
/// apostrophe.
fn curl_quotes(s: &str, double: bool, single: bool, opens_before: bool) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    // What precedes the span in the text decides the first quote: a stand-in for it.
    let mut prev = if opens_before { None } else { Some('x') };
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if double => out.push(if opens(prev) { '\u{201C}' } else { '\u{201D}' }),
            '\'' if single => {
                let next = chars.peek().copied();
                let apostrophe = prev.is_some_and(char::is_alphabetic) && next.is_some_and(char::is_alphabetic);
                out.push(if !apostrophe && opens(prev) { '\u{2018}' } else { '\u{2019}' });
            }
            _ => out.push(c),
        }
        prev = Some(c);
    }
    out
}

/// Whether a quote after `prev` (None: the start of the text) opens rather than closes.
fn opens(prev: Option<char>) -> bool {
    prev.is_none_or(|p| p.is_whitespace() || matches!(p, '(' | '[' | '{' | '\u{2014}' | '\u{2013}' | '-'))
}

/// Strips spaces and tabs at the end of every line that has a line break (before its
/// "\r\n" or "\n"), and of the last line if `last` is set.
fn strip_trailing(s: &str, last: bool) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find('\n') {
        let line = &rest[..at];
        let (body, cr) = line.strip_suffix('\r').map_or((line, ""), |body| (body, "\r"));
        out.push_str(body.trim_end_matches([' ', '\t']));
        out.push_str(cr);
        out.push('\n');
        rest = &rest[at + 1..];
    }
    out.push_str(if last { rest.trim_end_matches([' ', '\t']) } else { rest });
    out
}

/// Every lone "\n" becomes "\r\n".
fn to_crlf(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = String::with_capacity(s.len() + s.len() / 16);
    let mut copied = 0;
    for at in memchr_iter(b'\n', bytes) {
        if at == 0 || bytes[at - 1] != b'\r' {
            out.push_str(&s[copied..at]);
            out.push('\r');
            copied = at;
        }
    }
    out.push_str(&s[copied..]);
    out
}

/// Whether more lines end in "\r\n" than in a lone "\n".
fn crlf_dominant(text: &str) -> bool {
    let bytes = text.as_bytes();
    let crlf = memchr_iter(b'\n', bytes).filter(|&at| at > 0 && bytes[at - 1] == b'\r').count();
    let all = memchr_iter(b'\n', bytes).count();
    crlf > all - crlf
}

fn at_line_end(text: &str, at: usize) -> bool {
    matches!(text.as_bytes().get(at), None | Some(b'\n' | b'\r'))
}

/// new_string shaped for one replacement. A span decides only which quote kinds to curl,
/// whether its last line ends a line and whether a quote would open right before it, so
/// with replace_all at most sixteen shapes are ever built.
struct Shaper<'a> {
    new: Cow<'a, str>,
    strip: bool,
    crlf: bool,
    shaped: [Option<String>; 16],
}

impl Shaper<'_> {
    fn shape(&mut self, double: bool, single: bool, line_end: bool, opens_before: bool) -> &str {
        let curl = double || single;
        let key = usize::from(double)
            | usize::from(single) << 1
            | usize::from(line_end) << 2
            | usize::from(curl && opens_before) << 3;
        let (new, strip, crlf) = (&self.new, self.strip, self.crlf);
        self.shaped[key].get_or_insert_with(|| {
            let mut s = if curl { curl_quotes(new, double, single, opens_before) } else { new.to_string() };
            if strip {
                s = strip_trailing(&s, line_end);
            }
            if crlf {
                s = to_crlf(&s);
            } else if s.contains("\r\n") {
                // A mostly-LF text keeps its line endings too.
                s = s.replace("\r\n", "\n");
            }
            s
        })
    }
}

/// Gives `out` the final-newline state of `text` (the last replacement reached the end
/// of the text) and widens the last span over the break added or removed.
fn keep_final_newline(text: &str, out: &mut String, spans: &mut Vec<(Range<usize>, Range<usize>)>) {
    if text.ends_with('\n') && !out.is_empty() && !out.ends_with('\n') {
        out.push_str(if crlf_dominant(text) { "\r\n" } else { "\n" });
        if let Some(last) = spans.last_mut() {
            last.1.end = out.len();
        }
    } else if !text.ends_with('\n') && out.ends_with('\n') {
        let cut = out.len() - if out.ends_with("\r\n") { 2 } else { 1 };
        out.truncate(cut);
        // The break may have begun before the last replacement (its new text was empty or
        // shorter than the break): widen back over equal text, or merge with the
        // replacement before it.
        while let Some(i) = spans.len().checked_sub(1) {
            let start = spans[i].1.start;
            if start <= cut {
                spans[i].1.end = cut;
                return;
            }
            let need = start - cut;
            let equal_before = start - if i > 0 { spans[i - 1].1.end } else { 0 };
            if need <= equal_before {
                spans[i].0.start -= need;
                spans[i].1 = cut..cut;
                return;
            }
            let Some((old, new)) = spans.pop() else { return };
            if let Some(prev) = spans.last_mut() {
                prev.0.end = old.end;
                prev.1.end = new.end;
            }
        }
    }
}

/// Up to [`CANDIDATES`] lines most like old_string's first non-blank line, by a Dice
/// coefficient over byte bigrams of both (trimmed, first 200 chars), best first, ties by
/// line number. A line is scored only if its length leaves it a chance to beat the
/// current third best.
pub(crate) fn candidates(text: &str, old: &str) -> Vec<Candidate> {
    let Some(target) = old.lines().map(str::trim).find(|l| !l.is_empty()) else {
        return Vec::new();
    };
    let mut bigrams = Bigrams::new(cut_chars(target, CANDIDATE_CHARS).as_bytes());
    let mut best: Vec<(f64, usize, &str)> = Vec::with_capacity(CANDIDATES + 1);
    let bytes = text.as_bytes();
    let (mut start, mut number) = (0, 0);
    while start < bytes.len() {
        number += 1;
        let end = memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |i| start + i);
        let raw = &text[start..end];
        start = end + 1;
        let line = cut_chars(raw.trim(), CANDIDATE_CHARS);
        if line.is_empty() {
            continue;
        }
        let floor = if best.len() == CANDIDATES { best[CANDIDATES - 1].0 } else { 0.0 };
        let beats = |score: f64| score >= CANDIDATE_SCORE && (best.len() < CANDIDATES || score > floor);
        if !beats(bigrams.bound(line.len())) {
            continue;
        }
        let score = bigrams.score(line.as_bytes());
        if !beats(score) {
            continue;
        }
        let at = best.iter().position(|b| score > b.0).unwrap_or(best.len());
        best.insert(at, (score, number, raw));
        best.truncate(CANDIDATES);
    }
    best.into_iter()
        .map(|(_, line, raw)| Candidate { line, text: cut_chars(display(raw), CANDIDATE_CHARS).to_owned() })
        .collect()
}

/// The byte bigrams of one target string, for scoring many lines against it.
struct Bigrams {
    target: Vec<u8>,
    /// Bigram (two bytes as an index) → its id, 0 if not in the target.
    ids: Vec<u16>,
    /// Per id: occurrences in the target; occurrences matched in the current line; the
    /// line that last touched it (so nothing is cleared between lines).
    want: Vec<u16>,
    used: Vec<u16>,
    seen: Vec<u32>,
    stamp: u32,
}

impl Bigrams {
    fn new(target: &[u8]) -> Bigrams {
        let mut ids = vec![0u16; 1 << 16];
        let mut want = vec![0u16];
        for w in target.windows(2) {
            let key = bigram(w);
            if ids[key] == 0 {
                ids[key] = want.len() as u16;
                want.push(0);
            }
            want[usize::from(ids[key])] += 1;
        }
        let n = want.len();
        Bigrams { target: target.to_vec(), ids, want, used: vec![0; n], seen: vec![0; n], stamp: 0 }
    }

    /// The best score a line of `len` bytes could reach.
    fn bound(&self, len: usize) -> f64 {
        let (a, b) = (self.target.len().saturating_sub(1), len.saturating_sub(1));
        if a == 0 || b == 0 {
            return if a == b { 1.0 } else { 0.0 };
        }
        2.0 * a.min(b) as f64 / (a + b) as f64
    }

    /// 2·|common bigrams| / (|bigrams of target| + |bigrams of line|), counting repeats.
    fn score(&mut self, line: &[u8]) -> f64 {
        let (a, b) = (self.target.len().saturating_sub(1), line.len().saturating_sub(1));
        if a == 0 || b == 0 {
            return if line == self.target.as_slice() { 1.0 } else { 0.0 };
        }
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.seen.fill(0);
            self.stamp = 1;
        }
        let mut common = 0usize;
        for w in line.windows(2) {
            let id = usize::from(self.ids[bigram(w)]);
            if id == 0 {
                continue;
            }
            if self.seen[id] != self.stamp {
                self.seen[id] = self.stamp;
                self.used[id] = 0;
            }
            if self.used[id] < self.want[id] {
                self.used[id] += 1;
                common += 1;
            }
        }
        2.0 * common as f64 / (a + b) as f64
    }
}

fn bigram(w: &[u8]) -> usize {
    usize::from(w[0]) << 8 | usize::from(w[1])
}

/// `s` cut to at most `max` chars.
fn cut_chars(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    s.char_indices().nth(max).map_or(s, |(at, _)| &s[..at])
}

/// A line as shown: without its '\n' and a '\r' before it.
fn display(line: &str) -> &str {
    let line = line.strip_suffix('\n').unwrap_or(line);
    line.strip_suffix('\r').unwrap_or(line)
}

/// Lines in `s`: line breaks, plus one for a last line without one.
fn count_lines(s: &str) -> usize {
    memchr_iter(b'\n', s.as_bytes()).count() + usize::from(!s.is_empty() && !s.ends_with('\n'))
}

fn line_start(s: &str, at: usize) -> usize {
    memrchr(b'\n', &s.as_bytes()[..at]).map_or(0, |i| i + 1)
}

/// The end of the line containing `at`, after its '\n' (or the end of the text).
fn line_end(s: &str, at: usize) -> usize {
    memchr(b'\n', &s.as_bytes()[at..]).map_or(s.len(), |i| at + i + 1)
}

fn at_line_start(s: &str, at: usize) -> bool {
    at == 0 || s.as_bytes()[at - 1] == b'\n'
}

/// Steps back up to `n` lines from the line start `at`: (new start, lines stepped).
fn back_lines(s: &str, mut at: usize, n: usize) -> (usize, usize) {
    for stepped in 0..n {
        if at == 0 {
            return (at, stepped);
        }
        at = line_start(s, at - 1);
    }
    (at, n)
}

/// Steps forward up to `n` lines from the line start `at`: (new start, lines stepped).
fn forward_lines(s: &str, mut at: usize, n: usize) -> (usize, usize) {
    for stepped in 0..n {
        if at >= s.len() {
            return (at, stepped);
        }
        at = line_end(s, at);
    }
    (at, n)
}

/// Counts line breaks up to ever later offsets of one text.
struct LineCursor<'a> {
    text: &'a [u8],
    at: usize,
    line: usize,
}

impl<'a> LineCursor<'a> {
    fn new(text: &'a str) -> LineCursor<'a> {
        LineCursor { text: text.as_bytes(), at: 0, line: 0 }
    }

    /// The 0-based line of offset `at` (not before the last offset asked for).
    fn line_at(&mut self, at: usize) -> usize {
        let at = at.max(self.at);
        self.line += memchr_iter(b'\n', &self.text[self.at..at]).count();
        self.at = at;
        self.line
    }
}

/// A change in whole lines, with the 0-based line where it starts and its line counts.
struct Block {
    old: Range<usize>,
    new: Range<usize>,
    old_line: usize,
    new_line: usize,
    old_count: usize,
    new_count: usize,
}

/// The spans widened to whole lines, merged where they share or touch a line, and
/// trimmed of lines equal on both sides at their edges.
fn blocks(old: &str, new: &str, spans: &[(Range<usize>, Range<usize>)]) -> Vec<(Range<usize>, Range<usize>)> {
    let mut out: Vec<(Range<usize>, Range<usize>)> = Vec::new();
    for (o, n) in spans {
        // The line after the span is untouched only if both sides end exactly at its start.
        let whole = at_line_start(old, o.end) && at_line_start(new, n.end);
        let o = line_start(old, o.start)..if whole { o.end } else { line_end(old, o.end) };
        let n = line_start(new, n.start)..if whole { n.end } else { line_end(new, n.end) };
        match out.last_mut() {
            Some(last) if o.start <= last.0.end => {
                last.0.end = last.0.end.max(o.end);
                last.1.end = last.1.end.max(n.end);
            }
            _ => out.push((o, n)),
        }
    }
    for (o, n) in &mut out {
        while let (Some(a), Some(b)) = (first_line(old, o), first_line(new, n)) {
            if old[a.clone()] != new[b.clone()] {
                break;
            }
            o.start = a.end;
            n.start = b.end;
        }
        while let (Some(a), Some(b)) = (last_line(old, o), last_line(new, n)) {
            if old[a.clone()] != new[b.clone()] {
                break;
            }
            o.end = a.start;
            n.end = b.start;
        }
    }
    out.retain(|(o, n)| !o.is_empty() || !n.is_empty());
    out
}

fn first_line(s: &str, r: &Range<usize>) -> Option<Range<usize>> {
    (!r.is_empty()).then(|| r.start..line_end(s, r.start).min(r.end))
}

fn last_line(s: &str, r: &Range<usize>) -> Option<Range<usize>> {
    (!r.is_empty()).then(|| line_start(s, r.end - 1).max(r.start)..r.end)
}

/// A hunk range in GNU form: "l,n", "l" when n is 1, and for n = 0 the line before.
fn hunk_range(start: usize, count: usize) -> String {
    match count {
        0 => format!("{start},0"),
        1 => format!("{}", start + 1),
        _ => format!("{},{count}", start + 1),
    }
}

/// The diff being written, and how many more body lines it may take.
struct Body {
    out: String,
    left: usize,
    max_lines: usize,
    cut: bool,
}

impl Body {
    /// Writes every line of `text` (whole lines) with `sign` in front.
    fn lines(&mut self, sign: char, text: &str) {
        for line in text.split_inclusive('\n') {
            if self.cut {
                return;
            }
            if self.left == 0 {
                let _ = writeln!(self.out, "… diff cut at {} lines", group(self.max_lines as u64));
                self.cut = true;
                return;
            }
            self.left -= 1;
            self.out.push(sign);
            self.out.push_str(display(line));
            self.out.push('\n');
            if !line.ends_with('\n') {
                self.out.push_str("\\ No newline at end of file\n");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec<'a>(old: &'a str, new: &'a str) -> EditSpec<'a> {
        EditSpec { old, new, replace_all: false, strip_trailing_whitespace: true }
    }

    fn edit(text: &str, old: &str, new: &str) -> Edited {
        let e = apply_edit(text, &spec(old, new)).unwrap();
        check_spans(text, &e);
        e
    }

    fn edit_all(text: &str, old: &str, new: &str) -> Edited {
        let e = apply_edit(text, &EditSpec { replace_all: true, ..spec(old, new) }).unwrap();
        check_spans(text, &e);
        e
    }

    /// The spans account for every byte: outside them the texts are equal, inside them
    /// the new text holds what was inserted.
    fn check_spans(before: &str, e: &Edited) {
        let mut rebuilt = String::new();
        let mut copied = 0;
        for (o, n) in &e.spans {
            assert!(o.start >= copied && o.start <= o.end && n.start <= n.end, "{:?}", e.spans);
            rebuilt.push_str(&before[copied..o.start]);
            assert_eq!(rebuilt.len(), n.start, "{:?}", e.spans);
            rebuilt.push_str(&e.text[n.clone()]);
            copied = o.end;
        }
        rebuilt.push_str(&before[copied..]);
        assert_eq!(rebuilt, e.text);
    }

    fn twenty_lines() -> String {
        lines_with(&[])
    }

    /// Twenty lines "line N", but "X" on the lines listed.
    fn lines_with(marked: &[usize]) -> String {
        (1..=20).map(|i| if marked.contains(&i) { "X\n".to_owned() } else { format!("line {i}\n") }).collect()
    }

    #[test]
    fn exact_single() {
        let e = edit("fn a() {}\nfn b() {}\n", "fn b", "fn c");
        assert_eq!(e.text, "fn a() {}\nfn c() {}\n");
        assert_eq!((e.rung, e.count), (Rung::Exact, 1));
        assert_eq!(e.spans, vec![(10..14, 10..14)]);
    }

    #[test]
    fn ambiguous_reports_count_and_rung() {
        let r = apply_edit("x = 1\nx = 1\nx = 1\n", &spec("x = 1", "x = 2"));
        assert_eq!(r.unwrap_err(), EditFailure::Ambiguous { count: 3, rung: Rung::Exact });
        // Found nowhere exactly, twice once quotes are folded.
        let r = apply_edit("a(‘k’)\nb(‘k’)\n", &spec("('k')", "('j')"));
        assert_eq!(r.unwrap_err(), EditFailure::Ambiguous { count: 2, rung: Rung::Quotes });
    }

    #[test]
    fn replace_all_counts_and_spans() {
        let e = edit_all("a-b-a-b-a", "a", "xy");
        assert_eq!(e.text, "xy-b-xy-b-xy");
        assert_eq!(e.count, 3);
        assert_eq!(e.spans, vec![(0..1, 0..2), (4..5, 5..7), (8..9, 10..12)]);
        // Non-overlapping, left to right.
        let e = edit_all("aaaa", "aa", "b");
        assert_eq!((e.text.as_str(), e.count), ("bb", 2));
    }

    #[test]
    fn crlf_file_with_lf_old_string() {
        let text = "one\r\ntwo\r\nthree\r\nfour\r\n";
        let e = edit(text, "two\nthree", "2\n3\n3.5");
        assert_eq!(e.rung, Rung::LineEndings);
        assert_eq!(e.text, "one\r\n2\r\n3\r\n3.5\r\nfour\r\n");
        let (o, n) = e.spans[0].clone();
        assert_eq!(&text[o.clone()], "two\r\nthree");
        assert_eq!((&text[..o.start], &text[o.end..]), (&e.text[..n.start], &e.text[n.end..]));
        // A match that begins with the line break takes its '\r' along: no "\r\r\n".
        let e = edit(text, "\ntwo\n", "\nTWO\n");
        assert_eq!(e.text, "one\r\nTWO\r\nthree\r\nfour\r\n");
        assert_eq!(e.spans[0].0, 3..10);
    }

    #[test]
    fn lf_file_keeps_lf_when_new_string_has_crlf() {
        let e = edit("one\ntwo\n", "two", "2\r\n2.5");
        assert_eq!(e.text, "one\n2\n2.5\n");
    }

    #[test]
    fn leading_bom_of_old_string_is_dropped() {
        let e = edit("alpha\nbeta\n", "\u{feff}alpha", "gamma");
        assert_eq!((e.rung, e.text.as_str()), (Rung::LineEndings, "gamma\nbeta\n"));
    }

    #[test]
    fn a_match_starting_at_the_lf_of_a_crlf_takes_the_cr_along() {
        assert_eq!(edit("foo\r\nbar\r\n", "\nbar", " bar").text, "foo bar\r\n");
        assert_eq!(edit("foo\r\nbar\r\n", "\nbar", "\nbaz\nqux").text, "foo\r\nbaz\r\nqux\r\n");
        assert_eq!(edit_all("a\r\nb\r\n", "\n", "\n\n").text, "a\r\n\r\nb\r\n\r\n");
    }

    /// Found by fuzzing (fuzz/regressions/edit/crlf-take-along-overlap): with replace_all,
    /// a match ending in '\r' followed by one starting at the '\n' made the second take
    /// the first's '\r' along, and building the text panicked on the overlapping spans.
    #[test]
    fn a_cr_already_in_the_match_before_is_not_taken_along() {
        assert_eq!(edit_all("\n\r\n\r", "\n\r", "x").text, "xx");
        assert_eq!(edit_all("a\r\na\r\n", "\n", "\n\n").text, "a\r\n\r\na\r\n\r\n");
    }

    #[test]
    fn a_quote_at_the_start_of_new_string_follows_the_text_before_the_span() {
        let e = edit("He said \u{201C}a\u{201D} and \u{201C}b\u{201D}.", "\" and \"", "\" or \"");
        assert_eq!(e.text, "He said \u{201C}a\u{201D} or \u{201C}b\u{201D}.");
    }

    #[test]
    fn a_new_file_gets_lf_line_endings() {
        assert_eq!(edit("", "", "a\r\nb\r\n").text, "a\nb\n");
    }

    #[test]
    fn curly_quotes_stay_inside_the_span() {
        let text = "say(“hello”);\nlog(\"plain\");\n";
        let e = edit(text, "say(\"hello\");", "say(\"bye\", \"now\");");
        assert_eq!(e.rung, Rung::Quotes);
        assert_eq!(e.text, "say(“bye”, “now”);\nlog(\"plain\");\n");
        // Each span decides for itself: only the one with curly quotes gets them.
        let e = edit_all("p(“a”) \np(\"a\") \n", "p(\"a\")\n", "q(\"b\")\n");
        assert_eq!(e.rung, Rung::TrailingWhitespace);
        assert_eq!(e.text, "q(“b”)\nq(\"b\")\n");
        // Only the kinds present in the span are curled.
        let e = edit("x = “a”;\n", "x = \"a\";", "x = \"it's\";");
        assert_eq!(e.text, "x = “it's”;\n");
    }

    #[test]
    fn apostrophe_inside_a_word() {
        let e = edit("it’s ‘fine’\n", "it's 'fine'", "don't 'panic'");
        assert_eq!(e.rung, Rung::Quotes);
        assert_eq!(e.text, "don’t ‘panic’\n");
    }

    #[test]
    fn desanitized_tags() {
        let text = "<function_results>ok</function_results>\n";
        let e = edit(text, "<fnr>ok</fnr>", "<fnr>done</fnr>");
        assert_eq!(e.rung, Rung::Desanitized);
        assert_eq!(e.text, "<function_results>done</function_results>\n");
        let e = edit("a\n\nHuman: hi\n", "\n\nH: hi", "\n\nH: bye");
        assert_eq!(e.text, "a\n\nHuman: bye\n");
        // A file that holds the short form literally is matched on it, unmapped.
        let e = edit("<s>old</s>  \n", "<s>old</s>\n", "<s>new</s>\n");
        assert_eq!((e.rung, e.text.as_str()), (Rung::TrailingWhitespace, "<s>new</s>\n"));
    }

    #[test]
    fn trailing_whitespace_rung_keeps_unmatched_blanks() {
        let text = "x  \nfoo  \nbar  \nz\n";
        let e = edit(text, "foo\nbar", "baz\nqux");
        assert_eq!(e.rung, Rung::TrailingWhitespace);
        assert_eq!(&text[e.spans[0].0.clone()], "foo  \nbar");
        assert_eq!(e.text, "x  \nbaz\nqux  \nz\n");
    }

    #[test]
    fn strip_trailing_whitespace_on_and_off() {
        let e = edit("a\nb\nc\n", "b\n", "x  \ny\t\n");
        assert_eq!(e.text, "a\nx\ny\nc\n");
        let e = apply_edit("a\nb\nc\n", &EditSpec { strip_trailing_whitespace: false, ..spec("b\n", "x  \ny\t\n") });
        assert_eq!(e.unwrap().text, "a\nx  \ny\t\nc\n");
    }

    #[test]
    fn last_line_stripped_only_at_a_line_end() {
        assert_eq!(edit("a = 1\n", "a = ", "b = ").text, "b = 1\n");
        assert_eq!(edit("a = 1\n", "1", "2  ").text, "a = 2\n");
        assert_eq!(edit("a = 1\r\nb\r\n", "1", "2 ").text, "a = 2\r\nb\r\n");
    }

    #[test]
    fn no_change() {
        assert_eq!(apply_edit("a\n", &spec("a", "a")).unwrap_err(), EditFailure::NoChange);
        assert_eq!(apply_edit("", &spec("", "")).unwrap_err(), EditFailure::NoChange);
        // Differs only by blanks that get stripped.
        assert_eq!(apply_edit("a\n", &spec("a", "a  ")).unwrap_err(), EditFailure::NoChange);
    }

    #[test]
    fn not_empty() {
        assert_eq!(apply_edit("x", &spec("", "y")).unwrap_err(), EditFailure::NotEmpty);
    }

    #[test]
    fn empty_old_fills_empty_text() {
        let e = edit("", "", "hello  \nworld  ");
        assert_eq!(e.text, "hello\nworld");
        assert_eq!((e.rung, e.count), (Rung::Exact, 1));
        assert_eq!(e.spans, vec![(0..0, 0..11)]);
    }

    #[test]
    fn not_found_lists_candidates() {
        let text = "fn main() {\n    let total = compute_total(items);\n    println!(\"{total}\");\n}\n";
        let r = apply_edit(text, &spec("\n  let total = compute_totl(item);\n", "x"));
        let EditFailure::NotFound { candidates } = r.unwrap_err() else { panic!() };
        assert_eq!(candidates[0], Candidate { line: 2, text: "    let total = compute_total(items);".into() });
        assert!(candidates.len() <= 3);
        let r = apply_edit(text, &spec("zzzzqqqq", "x"));
        assert_eq!(r.unwrap_err(), EditFailure::NotFound { candidates: vec![] });
    }

    #[test]
    fn candidates_best_first_ties_by_line() {
        let text = "alpha beta\nalpha bet\nalpha beta\nalpha beta gamma delta\n";
        let c = candidates(text, "alpha beta");
        let lines: Vec<usize> = c.iter().map(|c| c.line).collect();
        assert_eq!(lines, vec![1, 3, 2]);
    }

    #[test]
    fn final_newline_kept_both_ways() {
        let e = edit("a\nb\n", "b\n", "c");
        assert_eq!(e.text, "a\nc\n");
        assert_eq!(e.spans, vec![(2..4, 2..4)]);
        assert_eq!(edit("a\nb", "b", "c\n").text, "a\nc");
        assert_eq!(edit("a\r\nb\r\n", "b\r\n", "c").text, "a\r\nc\r\n");
        // The break removed lies before the replacement: the span widens over it.
        let e = edit("a\nb", "b", "");
        assert_eq!(e.text, "a");
        assert_eq!(e.spans, vec![(1..3, 1..1)]);
        // Not at the end: the final state is not touched.
        assert_eq!(edit("a\nb\n", "a", "x").text, "x\nb\n");
    }

    #[test]
    fn multibyte_text_around_matches() {
        let text = "안녕 세상\nสวัสดี 🎉 ok\n“é”\n";
        let e = edit(text, "🎉", "🚀");
        assert_eq!(e.text, "안녕 세상\nสวัสดี 🚀 ok\n“é”\n");
        let e = edit(text, "세상", "世界");
        assert_eq!(e.text, "안녕 世界\nสวัสดี 🎉 ok\n“é”\n");
        let e = edit(text, "\"é\"", "\"ü\"");
        assert_eq!((e.rung, e.text.as_str()), (Rung::Quotes, "안녕 세상\nสวัสดี 🎉 ok\n“ü”\n"));
        assert_eq!(&text[e.spans[0].0.clone()], "“é”");
        let e = edit("한국어  \n🎉\n", "한국어\n🎉", "タイ\n🎊");
        assert_eq!(e.text, "タイ\n🎊\n");
    }

    #[test]
    fn folded_offsets_map_around_deletions_and_replacements() {
        let f = fold_trailing("ab  \ncd").unwrap();
        assert_eq!(f.text, "ab\ncd");
        assert_eq!((f.start(2), f.end(2)), (4, 2));
        let f = fold_crlf("a\r\nb").unwrap();
        assert_eq!((f.start(1), f.end(2)), (1, 3));
        let f = fold_quotes("“x”").unwrap();
        assert_eq!((f.text.as_str(), f.start(1), f.end(2), f.end(3)), ("\"x\"", 3, 4, 7));
    }

    #[test]
    fn unified_diff_one_line_change() {
        let old = twenty_lines();
        let e = edit(&old, "line 10\n", "LINE 10\n");
        let d = unified_diff(&old, &e.text, &e.spans, "f.txt", 3, 100);
        let want = "--- a/f.txt\n+++ b/f.txt\n@@ -7,7 +7,7 @@\n line 7\n line 8\n line 9\n-line 10\n+LINE 10\n line 11\n line 12\n line 13\n";
        assert_eq!(d, want);
        // A span that begins with the line break of the line before shows only the line changed.
        let e = edit(&old, "\nline 10", "\nLINE 10");
        assert_eq!(unified_diff(&old, &e.text, &e.spans, "f.txt", 3, 100), want);
    }

    #[test]
    fn unified_diff_merges_close_hunks() {
        // Changes six lines apart: their context touches, one hunk.
        let old = lines_with(&[5, 11]);
        let e = edit_all(&old, "X\n", "Y\n");
        let d = unified_diff(&old, &e.text, &e.spans, "f", 3, 100);
        assert_eq!(d.matches("@@ -").count(), 1, "{d}");
        assert!(d.contains("@@ -2,13 +2,13 @@\n line 2\n"), "{d}");
        // Ten lines apart: two hunks.
        let old = lines_with(&[5, 15]);
        let e = edit_all(&old, "X\n", "Y\n");
        let d = unified_diff(&old, &e.text, &e.spans, "f", 3, 100);
        assert_eq!(d.matches("@@ -").count(), 2, "{d}");
        assert!(d.contains("@@ -2,7 +2,7 @@\n") && d.contains("@@ -12,7 +12,7 @@\n"), "{d}");
        // Two spans on one line: one change.
        let e = edit_all("ab ab\n", "ab", "cd");
        assert_eq!(
            unified_diff("ab ab\n", &e.text, &e.spans, "f", 3, 100),
            "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-ab ab\n+cd cd\n"
        );
    }

    #[test]
    fn unified_diff_no_newline_marker() {
        let e = edit("a\nb", "b", "c");
        let d = unified_diff("a\nb", &e.text, &e.spans, "f", 3, 100);
        let want = "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n";
        assert_eq!(d, want);
        // Context line without a break at the end: one marker.
        let e = edit("a\nb", "a", "x");
        let d = unified_diff("a\nb", &e.text, &e.spans, "f", 3, 100);
        assert_eq!(d, "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-a\n+x\n b\n\\ No newline at end of file\n");
    }

    #[test]
    fn unified_diff_headers_and_cut() {
        let e = edit("", "", "x\ny\n");
        assert_eq!(unified_diff("", &e.text, &e.spans, "n", 3, 100), "--- a/n\n+++ b/n\n@@ -0,0 +1,2 @@\n+x\n+y\n");
        let e = edit("a\nb\nc\n", "b\n", "");
        assert_eq!(unified_diff("a\nb\nc\n", &e.text, &e.spans, "f", 0, 100), "--- a/f\n+++ b/f\n@@ -2 +1,0 @@\n-b\n");
        let old = twenty_lines();
        let e = edit(&old, "line 10\n", "LINE 10\n");
        let d = unified_diff(&old, &e.text, &e.spans, "f", 3, 2);
        assert_eq!(d, "--- a/f\n+++ b/f\n@@ -7,7 +7,7 @@\n line 7\n line 8\n… diff cut at 2 lines\n");
        assert_eq!(unified_diff("a", "a", &[], "f", 3, 10), "");
    }

    #[test]
    fn unified_diff_crlf_display() {
        let old = "a\r\nb\r\nc\r\n";
        let e = edit(old, "b", "B");
        let d = unified_diff(old, &e.text, &e.spans, "f", 1, 100);
        assert_eq!(d, "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n");
    }

    #[test]
    fn snippet_format() {
        let old = twenty_lines();
        let e = edit(&old, "line 10\n", "LINE 10\n");
        let s = snippet(&e.text, &e.spans, 2, 100);
        assert_eq!(s, "     8\tline 8\n     9\tline 9\n    10\tLINE 10\n    11\tline 11\n    12\tline 12\n");
        let old = lines_with(&[1, 9]);
        let e = edit_all(&old, "X\n", "Y\n");
        let s = snippet(&e.text, &e.spans, 1, 100);
        assert_eq!(s, "     1\tY\n     2\tline 2\n...\n     8\tline 8\n     9\tY\n    10\tline 10\n");
        // Groups that touch are one.
        assert!(!snippet(&e.text, &e.spans, 3, 100).contains("\n     5\t"));
        assert!(!snippet(&e.text, &e.spans, 4, 100).contains("..."));
        let s = snippet(&e.text, &e.spans, 1, 3);
        assert_eq!(s, "     1\tY\n     2\tline 2\n...\n     8\tline 8\n… 2 more lines not shown\n");
    }

    #[test]
    fn snippet_strips_cr_and_cuts_long_lines() {
        let text = format!("a\r\n{}\r\n", "é".repeat(2005));
        let e = edit(&text, "a", "b");
        let s = snippet(&e.text, &e.spans, 1, 10);
        let want = format!("     1\tb\n     2\t{} … [line cut: 5 more characters]\n", "é".repeat(2000));
        assert_eq!(s, want);
    }

    /// A 10 MiB, 200k-line text.
    fn big_text() -> String {
        let mut s = String::with_capacity(11 << 20);
        let mut i = 0u64;
        while s.len() < 10 << 20 {
            let _ = writeln!(s, "    let value_{i} = compute(input_{i}, {}) + offset; // row", i * 7919 % 1000);
            i += 1;
        }
        s
    }

    #[test]
    #[cfg(unix)]
    fn ten_mib_edit_and_not_found_are_fast() {
        // The thread's CPU time, not the wall clock: on a loaded machine that measures the others.
        fn cpu() -> std::time::Duration {
            let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
            // SAFETY: a valid clock id and a timespec to fill.
            unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
            std::time::Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
        }
        let text = big_text();
        let t = cpu();
        let e = edit(&text, "let value_100000 = ", "let renamed = ");
        assert_eq!(e.count, 1);
        let exact = cpu() - t;
        let t = cpu();
        let r = apply_edit(&text, &spec("let value_100000 = compute(input_100000, 0) + ofset;", "x"));
        let not_found = cpu() - t;
        let EditFailure::NotFound { candidates } = r.unwrap_err() else { panic!() };
        assert_eq!(candidates[0].line, 100_001);
        let bound = std::time::Duration::from_secs(if cfg!(debug_assertions) { 2 } else { 1 });
        assert!(exact < bound && not_found < bound, "exact {exact:?}, not found {not_found:?}");
    }

    #[test]
    fn insert_lines_puts_whole_lines_after_a_line_in_the_texts_endings() {
        let ins = |text: &str, after: usize, new: &str| insert_lines(text, after, new).map(|e| e.text);
        assert_eq!(ins("a\nb\n", 0, "x").unwrap(), "x\na\nb\n");
        assert_eq!(ins("a\nb\n", 1, "x\ny\n").unwrap(), "a\nx\ny\nb\n");
        assert_eq!(ins("a\nb\n", 2, "x").unwrap(), "a\nb\nx\n");
        assert_eq!(ins("a\r\nb\r\n", 1, "x\ny").unwrap(), "a\r\nx\r\ny\r\nb\r\n");
        // After a last line without a line break, the text still ends without one.
        assert_eq!(ins("a\nb", 2, "x\n").unwrap(), "a\nb\nx");
        assert_eq!(ins("", 0, "x").unwrap(), "x\n");
        assert_eq!(ins("a\n", 2, "x"), Err(EditFailure::LineOutOfRange { lines: 1 }));
        assert_eq!(ins("a\n", 1, ""), Err(EditFailure::NoChange));
        let e = insert_lines("a\nb\n", 1, "x").unwrap();
        assert_eq!(e.spans, vec![(2..2, 2..4)]);
    }
}
