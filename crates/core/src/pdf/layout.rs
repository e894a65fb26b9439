//! Glyphs laid out as text as they arrive: words by the gaps between glyphs, lines by
//! baseline shifts, a blank line where blocks lie far apart. Nothing per glyph is kept
//! beyond the current line, so memory follows the text, not the drawing.
//!
//! Right-to-left script (Arabic, Hebrew) comes out in logical order: glyphs drawn from
//! right to left are taken in the order they come, with the gaps measured backwards; a
//! line whose right-to-left glyphs were drawn from left to right (visual order, as most
//! writers place them) is reordered when it ends (see [`super::bidi`]). Arabic and Hebrew
//! presentation forms become the letters they stand for (NFKC), as pdf.js gives them.

use unicode_normalization::UnicodeNormalization;

use super::bidi;

/// Text one document may produce; past it the rest is dropped and the result says so.
pub(crate) const MAX_TEXT_BYTES: usize = 64 * 1024 * 1024;
/// Glyphs of one line remembered for reordering; a longer line keeps its order.
const MAX_LINE_UNITS: usize = 1 << 16;

/// A glyph placed on the page, in device space.
pub(crate) struct Placed {
    pub(crate) origin: (f64, f64),
    pub(crate) end: (f64, f64),
    /// The unit vector of the writing direction.
    pub(crate) dir: (f64, f64),
    /// The font size as drawn.
    pub(crate) size: f64,
    /// Which font drew it (the address of the shared font: equal for the same font).
    pub(crate) font: usize,
}

/// A gap wider than this share of the font size between two glyphs is a word break,
/// as in poppler's `pdftotext`.
const WORD_GAP: f64 = 0.1;
/// Where the font changes, a smaller gap already breaks the word: poppler starts a new
/// word at every font change, and TeX's math (a comma in another font after a letter)
/// leaves gaps this small.
const FONT_GAP: f64 = 0.02;
/// A baseline shift beyond this share of the font size starts a new line.
const LINE_SHIFT: f64 = 0.5;
/// A baseline shift beyond this share of the font size leaves a blank line between.
const PARAGRAPH_SHIFT: f64 = 2.2;
/// Right-to-left glyphs that overlap the one before by less than this share of the size
/// follow it (visual order); placed further back, they precede it (logical order).
const RTL_OVERLAP: f64 = 0.3;

/// Lays glyphs out as text as they arrive.
#[derive(Default)]
pub(crate) struct Sink {
    out: String,
    line_start: usize,
    prev: Option<Prev>,
    pending_space: bool,
    /// Glyphs with no Unicode mapping.
    pub(crate) unmapped: u64,
    /// Text was dropped at [`MAX_TEXT_BYTES`].
    pub(crate) cut: bool,
    total: usize,
    /// Characters (UTF-16 units) after which to stop, and those given so far.
    limit: Option<usize>,
    chars: usize,
    /// Where each glyph's text (and each space) starts in `out`, on the current line.
    units: Vec<usize>,
    /// The current line has right-to-left text; some of it was drawn left to right (visual
    /// order), some right to left (logical order).
    line_rtl: bool,
    rtl_visual: bool,
    rtl_logical: bool,
}

struct Prev {
    font: usize,
    origin: (f64, f64),
    end: (f64, f64),
    dir: (f64, f64),
    size: f64,
    text: char,
    /// Right-to-left text (a space after such text counts as it).
    rtl: bool,
}

fn dot(a: (f64, f64), b: (f64, f64), dir: (f64, f64)) -> f64 {
    (a.0 - b.0) * dir.0 + (a.1 - b.1) * dir.1
}

impl Sink {
    /// A sink that stops taking text after `limit` characters (see [`Sink::full`]).
    pub(crate) fn with_limit(limit: Option<usize>) -> Sink {
        Sink { limit, ..Sink::default() }
    }

    /// Counts `n` characters the caller adds around the text (page markers), so that the
    /// limit is on what the caller shows.
    pub(crate) fn charge(&mut self, n: usize) {
        self.chars += n;
    }

    /// Takes back `n` characters counted and then removed (trailing spaces and newlines):
    /// with a limit, `chars` is what the caller is given.
    fn uncount(&mut self, n: usize) {
        if self.limit.is_some() {
            self.chars = self.chars.saturating_sub(n);
        }
    }

    /// The text has reached the limit: the interpreter stops.
    pub(crate) fn full(&self) -> bool {
        self.limit.is_some_and(|limit| self.chars >= limit)
    }

    pub(crate) fn glyph(&mut self, g: &Placed, text: &str) {
        if self.full() {
            return;
        }
        let blank = text.chars().all(char::is_whitespace);
        let rtl = !blank && bidi::starts_rtl(text);
        if let Some(p) = &self.prev {
            let along = dot(g.origin, p.end, p.dir);
            let across = p.dir.0 * (g.origin.1 - p.end.1) - p.dir.1 * (g.origin.0 - p.end.0);
            let size = p.size.max(g.size).max(1e-6);
            let turned = g.dir.0 * p.dir.0 + g.dir.1 * p.dir.1 < 0.95;
            if turned || across.abs() > LINE_SHIFT * size {
                self.newline(across.abs() > PARAGRAPH_SHIFT * size && !turned);
            } else if !blank {
                let first = text.chars().next().unwrap_or(' ');
                let (ox, oy) = (g.origin.0 - p.origin.0, g.origin.1 - p.origin.1);
                if first == p.text && ox.hypot(oy) < 0.2 * size && along < 0.0 {
                    // The same glyph drawn again on top (fake bold): once is enough.
                    return;
                }
                let gap_breaks = |gap: f64| gap > WORD_GAP * size || (g.font != p.font && gap > FONT_GAP * size);
                // Right-to-left glyphs placed before the last one: drawn in logical order,
                // so the gap is from this glyph's end to the last one's origin.
                let backwards = rtl && p.rtl && along < 0.0 && dot(g.end, p.origin, p.dir) <= RTL_OVERLAP * size;
                if backwards {
                    self.rtl_logical = true;
                    if gap_breaks(dot(p.origin, g.end, p.dir)) {
                        self.pending_space = true;
                    }
                } else {
                    if rtl && p.rtl && along > -RTL_OVERLAP * size {
                        self.rtl_visual = true;
                    }
                    if gap_breaks(along) || along < -0.5 * size - (p.end.0 - p.origin.0).hypot(p.end.1 - p.origin.1) {
                        self.pending_space = true;
                    }
                }
            }
        }
        let last = text.chars().last().unwrap_or(' ');
        let rtl_context = rtl || (blank && self.prev.as_ref().is_some_and(|p| p.rtl));
        self.prev = Some(Prev {
            font: g.font,
            origin: g.origin,
            end: g.end,
            dir: g.dir,
            size: g.size,
            text: last,
            rtl: rtl_context,
        });
        if blank {
            self.pending_space = true;
            return;
        }
        if self.pending_space && self.out.len() > self.line_start && !self.out.ends_with(' ') {
            self.unit();
            self.push(" ");
        }
        self.pending_space = false;
        self.line_rtl |= rtl;
        self.unit();
        self.push(text);
    }

    /// Marks where the next glyph's text starts.
    fn unit(&mut self) {
        if self.units.len() < MAX_LINE_UNITS {
            self.units.push(self.out.len());
        }
    }

    fn push(&mut self, text: &str) {
        if self.total + self.out.len() + text.len() > MAX_TEXT_BYTES {
            self.cut = true;
            return;
        }
        let before = self.out.len();
        for c in text.chars() {
            match c {
                '\u{fb00}' => self.out.push_str("ff"),
                '\u{fb01}' => self.out.push_str("fi"),
                '\u{fb02}' => self.out.push_str("fl"),
                '\u{fb03}' => self.out.push_str("ffi"),
                '\u{fb04}' => self.out.push_str("ffl"),
                '\u{fb05}' | '\u{fb06}' => self.out.push_str("st"),
                // Hebrew and Arabic presentation forms: the letters they stand for.
                '\u{fb1d}'..='\u{fdff}' | '\u{fe70}'..='\u{feff}' => {
                    self.out.extend(std::iter::once(c).nfkc().filter(|c| !c.is_control()));
                }
                c if c.is_whitespace() => {
                    if !self.out.ends_with(' ') && self.out.len() > self.line_start {
                        self.out.push(' ');
                    }
                }
                c if c.is_control() => {}
                c => self.out.push(c),
            }
        }
        if self.limit.is_some() {
            self.chars += self.out[before..].encode_utf16().count();
        }
    }

    fn newline(&mut self, paragraph: bool) {
        self.pending_space = false;
        let kept = self.out.trim_end_matches(' ').len().max(self.line_start);
        // The spaces trimmed were counted (one unit each); the count is of what is shown.
        self.uncount(self.out.len() - kept);
        self.out.truncate(kept);
        if self.line_rtl && self.rtl_visual && !self.rtl_logical && self.out.len() > self.line_start {
            let starts: Vec<usize> = self
                .units
                .iter()
                .filter(|&&u| u >= self.line_start && u < self.out.len())
                .map(|&u| u - self.line_start)
                .collect();
            let logical = bidi::visual_to_logical(&self.out[self.line_start..], &starts);
            self.out.truncate(self.line_start);
            self.out.push_str(&logical);
        }
        self.units.clear();
        self.line_rtl = false;
        self.rtl_visual = false;
        self.rtl_logical = false;
        if self.out.len() > self.line_start {
            self.out.push('\n');
            self.chars += 1;
            if paragraph {
                self.out.push('\n');
                self.chars += 1;
            }
            self.line_start = self.out.len();
        }
    }

    /// Text on a line of its own.
    pub(crate) fn line(&mut self, text: &str) {
        if self.full() {
            return;
        }
        self.newline(false);
        self.push(text);
        self.newline(false);
        self.prev = None;
    }

    /// The page's text so far, and a fresh start for the next page.
    pub(crate) fn take_page(&mut self) -> String {
        self.newline(false);
        self.prev = None;
        let mut text = std::mem::take(&mut self.out);
        while text.ends_with('\n') {
            text.pop();
            self.uncount(1);
        }
        self.total += text.len();
        self.line_start = 0;
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(x: f64, y: f64, w: f64) -> Placed {
        Placed { origin: (x, y), end: (x + w, y), dir: (1.0, 0.0), size: 10.0, font: 0 }
    }

    #[test]
    fn gaps_make_words_and_shifts_make_lines() {
        let mut s = Sink::default();
        s.glyph(&at(0.0, 100.0, 5.0), "H");
        s.glyph(&at(5.2, 100.0, 5.0), "i");
        s.glyph(&at(13.0, 100.0, 5.0), "y");
        s.glyph(&at(0.0, 88.0, 5.0), "o");
        s.glyph(&at(0.0, 40.0, 5.0), "z");
        assert_eq!(s.take_page(), "Hi y\no\n\nz");
    }

    #[test]
    fn spaces_collapse_and_overprints_drop() {
        let mut s = Sink::default();
        s.glyph(&at(0.0, 0.0, 5.0), "a");
        s.glyph(&at(5.0, 0.0, 2.5), " ");
        s.glyph(&at(7.5, 0.0, 2.5), " ");
        s.glyph(&at(10.0, 0.0, 5.0), "b");
        s.glyph(&at(10.5, 0.0, 5.0), "b");
        s.glyph(&at(15.0, 0.0, 5.0), "\u{fb01}");
        assert_eq!(s.take_page(), "a bfi");
    }

    #[test]
    fn a_font_change_breaks_a_word_at_a_smaller_gap() {
        let mut s = Sink::default();
        s.glyph(&at(0.0, 0.0, 5.0), "X");
        s.glyph(&at(5.5, 0.0, 5.0), ",");
        let other = Placed { font: 1, ..at(11.0, 0.0, 5.0) };
        s.glyph(&other, "Y");
        let touching = Placed { font: 0, ..at(16.0, 0.0, 5.0) };
        s.glyph(&touching, "z");
        // 0.5 is under a tenth of the size in one font, over 0.02 of it across a change;
        // a change with no gap joins.
        assert_eq!(s.take_page(), "X, Yz");
    }

    /// Arabic drawn left to right in presentation forms (visual order), as most writers
    /// place it: logical order and plain letters come out, the number kept left to right.
    #[test]
    fn visual_arabic_is_reordered_and_its_forms_normalized() {
        let mut s = Sink::default();
        // "سلام عليكم 12" in a right-to-left line, drawn from the left: "12", then
        // "عليكم" from its last letter, then "سلام" (its lam-alef one ligature glyph).
        let visual = [
            "1", "2", " ", "\u{fee2}", "\u{fedc}", "\u{fef4}", "\u{fee0}", "\u{fecb}", " ", "\u{fee1}", "\u{fefc}",
            "\u{feb3}",
        ];
        for (i, g) in visual.iter().enumerate() {
            s.glyph(&at(i as f64 * 5.0, 0.0, 5.0), g);
        }
        assert_eq!(s.take_page(), "\u{633}\u{644}\u{627}\u{645} \u{639}\u{644}\u{64a}\u{643}\u{645} 12");
    }

    /// Hebrew drawn right to left, glyph by glyph (logical order): taken as it comes, with
    /// the word gap measured backwards.
    #[test]
    fn logical_hebrew_keeps_its_order() {
        let mut s = Sink::default();
        let mut x = 100.0;
        for (i, g) in ["ש", "ל", "ו", "ם", "ע", "ו", "ל", "ם"].iter().enumerate() {
            if i == 4 {
                x -= 4.0; // a word gap
            }
            x -= 5.0;
            s.glyph(&at(x, 0.0, 5.0), g);
        }
        assert_eq!(s.take_page(), "שלום עולם");
    }

    /// A glyph whose text is a whole word already in logical order is not reversed.
    #[test]
    fn a_glyph_with_a_whole_word_keeps_it() {
        let mut s = Sink::default();
        s.glyph(&at(0.0, 0.0, 30.0), "\u{62d}\u{628}\u{64a}\u{628}\u{64a} habibi");
        assert_eq!(s.take_page(), "\u{62d}\u{628}\u{64a}\u{628}\u{64a} habibi");
    }

    #[test]
    fn the_limit_stops_taking_text() {
        let mut s = Sink::with_limit(Some(3));
        for (i, c) in ["a", "b", "c", "d"].iter().enumerate() {
            s.glyph(&at(i as f64 * 5.0, 0.0, 5.0), c);
        }
        assert!(s.full());
        assert_eq!(s.take_page(), "abc");
    }

    #[test]
    fn the_count_is_of_the_text_given_not_of_spaces_and_newlines_trimmed() {
        // Lines that end with a space glyph: each space is counted, then trimmed.
        let mut s = Sink::with_limit(Some(1000));
        for line in 0..20 {
            let y = 500.0 - line as f64 * 12.0;
            s.glyph(&at(0.0, y, 5.0), "a");
            s.glyph(&at(5.0, y, 5.0), " ");
        }
        s.line("b");
        let page = s.take_page();
        assert!(!page.contains(" \n") && !page.ends_with('\n'), "{page:?}");
        assert_eq!(s.chars, page.encode_utf16().count());
    }
}
