//! CMaps: the code space that splits a string into character codes, the code → Unicode
//! map of a `/ToUnicode` stream, and the code → CID map of an embedded `/Encoding` CMap.

use std::borrow::Cow;

use rustc_hash::FxHashMap;

use super::lexer::{Lexer, Token};

/// Entries one CMap may hold; ranges past this are ignored (a hostile `bfrange` can
/// name four billion codes).
const MAX_ENTRIES: usize = 1 << 20;
/// UTF-16 units one code may map to (a ligature is a few; more is an attack).
const MAX_DESTINATION_UNITS: usize = 32;
/// Code space ranges one CMap may have (real ones have a handful), and CID ranges (the
/// largest Adobe CMaps have a few thousand).
const MAX_SPACE_RANGES: usize = 64;
const MAX_CID_RANGES: usize = 1 << 16;

/// A parsed CMap.
#[derive(Debug, Default)]
pub(crate) struct CMap {
    /// Code space ranges: byte length, low and high code.
    pub(crate) space: Vec<(u8, u32, u32)>,
    /// Code → Unicode text (`bfchar`, and the `bfrange`s that list their texts).
    pub(crate) unicode: FxHashMap<u32, Box<str>>,
    /// `bfrange`s whose text counts up from the first code's: (0, low, high, the first
    /// code's text in UTF-16BE). Kept as ranges, so a range costs what its line does, not
    /// what its codes would (see [`CMap::text_of`]).
    pub(crate) unicode_ranges: Vec<(u8, u32, u32, Box<[u8]>)>,
    unicode_reach: Vec<usize>,
    /// Code → CID (`cidchar`, `cidrange`), with the length of the code.
    pub(crate) cid: FxHashMap<(u8, u32), u32>,
    /// `cidrange`s too large to expand: (length, low, high, first CID).
    pub(crate) cid_ranges: Vec<(u8, u32, u32, u32)>,
    /// For each CID range, the one at or before it (of the same code length) that
    /// reaches the highest code: where a code past a nested range is found.
    reach: Vec<usize>,
    /// The CMap this one builds on (`usecmap`), by name.
    pub(crate) parent: Option<Vec<u8>>,
    /// Code mappings made (`bfchar`, each code of a `bfrange` that lists its texts, each
    /// other `bfrange` once, `cidchar`).
    pub(crate) entries: usize,
}

fn code_of(bytes: &[u8]) -> (u8, u32) {
    let len = bytes.len().min(4);
    let code = bytes[..len].iter().fold(0u32, |acc, &b| acc << 8 | u32::from(b));
    (len as u8, code)
}

/// The text of a UTF-16BE destination string; unpaired surrogates become U+FFFD. At
/// most [`MAX_DESTINATION_UNITS`] units are read.
pub(crate) fn utf16be(bytes: &[u8]) -> String {
    let bytes = &bytes[..bytes.len().min(2 * MAX_DESTINATION_UNITS)];
    let units = bytes.chunks(2).map(|c| u16::from(c[0]) << 8 | u16::from(*c.get(1).unwrap_or(&0)));
    char::decode_utf16(units).map(|c| c.unwrap_or('\u{fffd}')).collect()
}

/// Adds `step` to the last UTF-16 unit of a destination (a `bfrange` with a base).
fn bump(dst: &[u8], step: u32) -> Vec<u8> {
    let mut out = dst.to_vec();
    if out.len() >= 2 {
        let n = out.len();
        let last = (u32::from(out[n - 2]) << 8 | u32::from(out[n - 1])).wrapping_add(step);
        out[n - 2] = (last >> 8) as u8;
        out[n - 1] = last as u8;
    } else if let Some(b) = out.last_mut() {
        *b = b.wrapping_add(step as u8);
    }
    out
}

impl CMap {
    /// Parses CMap source. Junk is skipped; a CMap with nothing usable is empty.
    #[cfg(test)]
    pub(crate) fn parse(data: &[u8]) -> CMap {
        CMap::parse_within(data, MAX_ENTRIES)
    }

    /// Parses CMap source with at most `limit` code mappings (and never more than
    /// [`MAX_ENTRIES`]): a document's CMaps share one budget (see `Budget::cmap_entries`).
    pub(crate) fn parse_within(data: &[u8], limit: usize) -> CMap {
        let limit = limit.min(MAX_ENTRIES);
        let mut map = CMap::default();
        let mut lx = Lexer::new(data);
        let mut operands: Vec<Token<'_>> = Vec::new();
        let mut entries = 0usize;
        // Inside a begin…end section: which one.
        let mut section: Option<&[u8]> = None;
        let mut array: Option<Vec<Vec<u8>>> = None;
        while let Some(tok) = lx.next_token() {
            match tok {
                Token::ArrayStart => array = Some(Vec::new()),
                Token::ArrayEnd => {
                    if let Some(items) = array.take() {
                        operands.push(Token::Str(mark_array(items)));
                    }
                }
                Token::Str(s) if array.is_some() => array.as_mut().expect("checked").push(s),
                Token::Keyword(k) => {
                    match k {
                        b"begincodespacerange"
                        | b"beginbfchar"
                        | b"beginbfrange"
                        | b"begincidchar"
                        | b"begincidrange"
                        | b"beginnotdefrange" => section = Some(k),
                        b"endcodespacerange" | b"endbfchar" | b"endbfrange" | b"endcidchar" | b"endcidrange"
                        | b"endnotdefrange" => {
                            if entries < limit {
                                map.section(section.unwrap_or(b""), &operands, &mut entries, limit);
                            }
                            section = None;
                        }
                        b"usecmap" => {
                            if let Some(Token::Name(n)) = operands.last() {
                                map.parent = Some(n.to_vec());
                            }
                        }
                        _ => {}
                    }
                    operands.clear();
                }
                other => {
                    if operands.len() < 3 * 100_000 {
                        operands.push(other);
                    }
                }
            }
        }
        map.entries = entries;
        map.cid_ranges.sort_unstable();
        map.reach = reach(&map.cid_ranges);
        map.unicode_ranges.sort_by_key(|r| (r.0, r.1));
        map.unicode_reach = reach(&map.unicode_ranges);
        map
    }

    /// The text of `code`: a `bfchar` (or listed `bfrange` entry), else a counting
    /// `bfrange` (its first text with the last UTF-16 unit moved up).
    pub(crate) fn text_of(&self, code: u32) -> Option<Cow<'_, str>> {
        if let Some(t) = self.unicode.get(&code) {
            return Some(Cow::Borrowed(t));
        }
        let (lo, dst) = find(&self.unicode_ranges, &self.unicode_reach, 0, code)?;
        Some(Cow::Owned(utf16be(&bump(dst, code - lo))))
    }

    /// Whether the CMap maps no code to text.
    pub(crate) fn no_text(&self) -> bool {
        self.unicode.is_empty() && self.unicode_ranges.is_empty()
    }

    fn section(&mut self, kind: &[u8], ops: &[Token<'_>], entries: &mut usize, limit: usize) {
        match kind {
            b"begincodespacerange" => {
                for pair in ops.chunks_exact(2) {
                    if let (Token::Str(lo), Token::Str(hi)) = (&pair[0], &pair[1]) {
                        if !lo.is_empty() && lo.len() == hi.len() && self.space.len() < MAX_SPACE_RANGES {
                            let (len, lo) = code_of(lo);
                            let (_, hi) = code_of(hi);
                            self.space.push((len, lo, hi));
                        }
                    }
                }
            }
            b"beginbfchar" => {
                for pair in ops.chunks_exact(2) {
                    if let (Token::Str(src), Token::Str(dst)) = (&pair[0], &pair[1]) {
                        if !src.is_empty() && *entries < limit {
                            self.unicode.insert(code_of(src).1, utf16be(dst).into());
                            *entries += 1;
                        }
                    }
                }
            }
            b"beginbfrange" => {
                for triple in ops.chunks_exact(3) {
                    let (Token::Str(lo), Token::Str(hi), Token::Str(dst)) = (&triple[0], &triple[1], &triple[2]) else {
                        continue;
                    };
                    if lo.is_empty() {
                        continue;
                    }
                    let (_, lo) = code_of(lo);
                    let (_, hi) = code_of(hi);
                    if hi < lo {
                        continue;
                    }
                    let count = (hi - lo) as usize + 1;
                    if let Some(items) = array_items(dst) {
                        let count = count.min(items.len());
                        if *entries + count > limit {
                            return;
                        }
                        *entries += count;
                        for (i, item) in items.iter().enumerate().take(count) {
                            self.unicode.insert(lo + i as u32, utf16be(item).into());
                        }
                    } else {
                        // A range far past what one CMap may map is junk (four billion codes).
                        if *entries + 1 > limit || count > MAX_ENTRIES {
                            return;
                        }
                        *entries += 1;
                        let dst = &dst[..dst.len().min(2 * MAX_DESTINATION_UNITS)];
                        self.unicode_ranges.push((0, lo, hi, dst.into()));
                    }
                }
            }
            b"begincidchar" => {
                for pair in ops.chunks_exact(2) {
                    if let (Token::Str(src), Token::Number(cid)) = (&pair[0], &pair[1]) {
                        if !src.is_empty() && *entries < limit {
                            self.cid.insert(code_of(src), *cid as u32);
                            *entries += 1;
                        }
                    }
                }
            }
            b"begincidrange" => {
                for triple in ops.chunks_exact(3) {
                    if let (Token::Str(lo), Token::Str(hi), Token::Number(cid)) = (&triple[0], &triple[1], &triple[2]) {
                        if lo.is_empty() || lo.len() != hi.len() {
                            continue;
                        }
                        let (len, lo) = code_of(lo);
                        let (_, hi) = code_of(hi);
                        if hi >= lo && self.cid_ranges.len() < MAX_CID_RANGES {
                            self.cid_ranges.push((len, lo, hi, *cid as u32));
                        }
                    }
                }
            }
            _ => {}
        }
    }

    /// The CID of a code of `len` bytes, where this CMap maps it. The CID ranges are
    /// sorted by [`CMap::parse`] and searched by halving: the last range that starts at or
    /// before the code maps it if it reaches it, else the earlier range that reaches
    /// furthest (a code after a range nested in a wider one).
    pub(crate) fn cid_of(&self, len: u8, code: u32) -> Option<u32> {
        if let Some(&cid) = self.cid.get(&(len, code)) {
            return Some(cid);
        }
        let (lo, &cid) = find(&self.cid_ranges, &self.reach, len, code)?;
        Some(cid.saturating_add(code - lo))
    }
}

/// For each range of a sorted list, the one at or before it (of the same code length)
/// that reaches the highest code: where a code past a nested range is found.
fn reach<T>(ranges: &[(u8, u32, u32, T)]) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::with_capacity(ranges.len());
    for i in 0..ranges.len() {
        let j = match out.last() {
            Some(&j) if ranges[j].0 == ranges[i].0 && ranges[j].2 >= ranges[i].2 => j,
            _ => i,
        };
        out.push(j);
    }
    out
}

/// The range of `ranges` (sorted, with their [`reach`]) that holds `code`, by halving: the
/// last one that starts at or before the code if it reaches it, else the earlier one that
/// reaches furthest. Gives its first code and its value.
fn find<'a, T>(ranges: &'a [(u8, u32, u32, T)], reach: &[usize], len: u8, code: u32) -> Option<(u32, &'a T)> {
    let after = ranges.partition_point(|r| (r.0, r.1) <= (len, code));
    let at = after.checked_sub(1)?;
    [at, reach[at]].into_iter().find_map(|k| {
        let (l, lo, hi, value) = &ranges[k];
        (*l == len && code <= *hi).then_some((*lo, value))
    })
}

/// Marks the items of an array destination (the array form of `bfrange`) so they pass
/// through the operand stack as one string: a tag, then each item with its length.
fn mark_array(items: Vec<Vec<u8>>) -> Vec<u8> {
    let mut marked = vec![0xff, 0xfe, 0xfd];
    for item in items {
        marked.extend_from_slice(&(item.len() as u32).to_be_bytes());
        marked.extend_from_slice(&item);
    }
    marked
}

/// The items of an array destination, as marked by [`mark_array`].
fn array_items(dst: &[u8]) -> Option<Vec<&[u8]>> {
    let mut rest = dst.strip_prefix(&[0xff, 0xfe, 0xfd][..])?;
    let mut items = Vec::new();
    while rest.len() >= 4 {
        let n = u32::from_be_bytes([rest[0], rest[1], rest[2], rest[3]]) as usize;
        let end = (4 + n).min(rest.len());
        items.push(&rest[4..end]);
        rest = &rest[end..];
    }
    Some(items)
}

/// How a font's strings split into codes.
#[derive(Debug, Clone)]
pub(crate) enum CodeSpace {
    /// One byte per code (simple fonts).
    One,
    /// Two bytes per code (Identity-H/V, UCS-2 CMaps).
    Two,
    /// Ranges from a CMap: the shortest range that matches wins, as PDF says.
    Ranges(Vec<(u8, u32, u32)>),
    /// A legacy multi-byte encoding, split by its lead bytes.
    Legacy(&'static encoding_rs::Encoding),
}

impl CodeSpace {
    /// Splits `bytes` into (code, length in bytes) pairs; stops when `f` returns false.
    pub(crate) fn each(&self, bytes: &[u8], mut f: impl FnMut(u32, u8) -> bool) {
        match self {
            CodeSpace::One => {
                for &b in bytes {
                    if !f(u32::from(b), 1) {
                        return;
                    }
                }
            }
            CodeSpace::Two => {
                for pair in bytes.chunks(2) {
                    let code = pair.iter().fold(0u32, |acc, &b| acc << 8 | u32::from(b));
                    if !f(code, pair.len() as u8) {
                        return;
                    }
                }
            }
            CodeSpace::Ranges(ranges) => {
                let mut i = 0;
                while i < bytes.len() {
                    let mut code = 0u32;
                    let mut taken = 0u8;
                    for len in 1..=4u8 {
                        let Some(&b) = bytes.get(i + usize::from(len) - 1) else { break };
                        code = code << 8 | u32::from(b);
                        if ranges.iter().any(|&(l, lo, hi)| l == len && (lo..=hi).contains(&code)) {
                            taken = len;
                            break;
                        }
                    }
                    if taken == 0 {
                        // Not in the code space: take the shortest length the CMap uses.
                        let len = ranges.iter().map(|r| r.0).min().unwrap_or(1).max(1);
                        let end = (i + usize::from(len)).min(bytes.len());
                        let code = bytes[i..end].iter().fold(0u32, |acc, &b| acc << 8 | u32::from(b));
                        if !f(code, (end - i) as u8) {
                            return;
                        }
                        i = end;
                    } else {
                        if !f(code, taken) {
                            return;
                        }
                        i += usize::from(taken);
                    }
                }
            }
            CodeSpace::Legacy(encoding) => {
                let mut i = 0;
                while i < bytes.len() {
                    let len = legacy_len(encoding, bytes[i]).min(bytes.len() - i);
                    let code = bytes[i..i + len].iter().fold(0u32, |acc, &b| acc << 8 | u32::from(b));
                    if !f(code, len as u8) {
                        return;
                    }
                    i += len;
                }
            }
        }
    }
}

/// The length of a character in a legacy CJK encoding, from its lead byte.
fn legacy_len(encoding: &encoding_rs::Encoding, lead: u8) -> usize {
    if encoding == encoding_rs::SHIFT_JIS {
        if matches!(lead, 0x81..=0x9f | 0xe0..=0xfc) {
            2
        } else {
            1
        }
    } else if lead >= 0x81 {
        2
    } else {
        1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_to_unicode_cmap() {
        let src = b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap
            1 begincodespacerange <0000> <FFFF> endcodespacerange
            2 beginbfchar <0003> <0020> <0024> <00660069> endbfchar
            2 beginbfrange <0010> <0012> <0041> <0020> <0021> [<D83DDE00> <00E9>] endbfrange
            endcmap CMapName currentdict /CMap defineresource pop end end";
        let m = CMap::parse(src);
        assert_eq!(m.space, vec![(2, 0, 0xffff)]);
        assert_eq!(m.text_of(3).as_deref(), Some(" "));
        assert_eq!(m.text_of(0x24).as_deref(), Some("fi"));
        assert_eq!(m.text_of(0x10).as_deref(), Some("A"));
        assert_eq!(m.text_of(0x12).as_deref(), Some("C"));
        assert_eq!(m.text_of(0x13), None);
        assert_eq!(m.text_of(0x20).as_deref(), Some("😀"));
        assert_eq!(m.text_of(0x21).as_deref(), Some("é"));
    }

    #[test]
    fn cid_ranges_and_mixed_code_space() {
        let src = b"2 begincodespacerange <00> <80> <8140> <9FFC> endcodespacerange
            1 begincidrange <8140> <817E> 633 endcidrange 1 begincidchar <41> 34 endcidchar";
        let m = CMap::parse(src);
        assert_eq!(m.cid_of(2, 0x8141), Some(634));
        assert_eq!(m.cid_of(1, 0x41), Some(34));
        let mut codes = Vec::new();
        CodeSpace::Ranges(m.space.clone()).each(b"A\x81\x40B", |c, l| {
            codes.push((c, l));
            true
        });
        assert_eq!(codes, vec![(0x41, 1), (0x8140, 2), (0x42, 1)]);
    }

    /// A document's CMaps share one budget of mappings: past it, nothing more is mapped.
    #[test]
    fn mappings_stop_at_the_limit() {
        let src = b"2 beginbfchar <01> <0041> <02> <0042> endbfchar 1 beginbfrange <10> <1F> <0041> endbfrange 1 begincidchar <03> 7 endcidchar";
        let all = CMap::parse_within(src, usize::MAX);
        assert_eq!((all.entries, all.unicode.len(), all.unicode_ranges.len(), all.cid.len()), (4, 2, 1, 1));
        let some = CMap::parse_within(src, 1);
        assert_eq!((some.entries, some.unicode.len(), some.cid.len()), (1, 1, 0));
        let none = CMap::parse_within(src, 0);
        assert_eq!((none.entries, none.unicode.len()), (0, 0));
    }

    /// Found by fuzzing (the cmap corpus seed `cid`): a code of a wide CID range that
    /// comes after a range nested in it had no CID.
    #[test]
    fn a_code_after_a_nested_range_is_in_the_wide_one() {
        let m = CMap::parse(b"1 begincodespacerange <8140> <9FFC> endcodespacerange 2 begincidrange <8140> <817E> 633 <8150> <8151> 9 endcidrange");
        assert_eq!(m.cid_of(2, 0x8141), Some(634));
        assert_eq!(m.cid_of(2, 0x8150), Some(9));
        assert_eq!(m.cid_of(2, 0x817E), Some(633 + 0x3E));
        assert_eq!(m.cid_of(2, 0x817F), None);
        assert_eq!(m.cid_of(1, 0x81), None);
    }

    /// Found by fuzzing (fuzz/regressions/cmap/two-byte-odd-tail): the lone last byte of
    /// a string in a two-byte font was reported as a code of two bytes.
    #[test]
    fn an_odd_last_byte_of_a_two_byte_string_is_one_byte_long() {
        let mut codes = Vec::new();
        CodeSpace::Two.each(b"\x00\x41\x42", |c, l| {
            codes.push((c, l));
            true
        });
        assert_eq!(codes, vec![(0x41, 2), (0x42, 1)]);
    }

    #[test]
    fn a_huge_range_is_bounded() {
        let m = CMap::parse(b"1 beginbfrange <00000000> <FFFFFFFF> <0041> endbfrange");
        assert!(m.no_text());
    }

    /// Issue 22 (memory): a range of 65,536 codes is one entry, not 65,536 strings.
    #[test]
    fn a_counting_range_stays_a_range() {
        let m = CMap::parse(
            b"1 beginbfrange <0000> <FFFF> <4E00> endbfrange 1 beginbfrange <0100> <0101> <0041> endbfrange",
        );
        assert_eq!((m.entries, m.unicode.len(), m.unicode_ranges.len()), (2, 0, 2));
        assert_eq!(m.text_of(0x0005).as_deref(), Some("\u{4e05}"));
        // The nested range wins inside itself, the wide one around it.
        assert_eq!(m.text_of(0x0101).as_deref(), Some("B"));
        assert_eq!(m.text_of(0x0102).as_deref(), Some("\u{4f02}"));
    }
}
