//! The file as lopdf will see it, checked and mended before it loads: what lopdf unpacks
//! without a bound is measured first, and the stream lengths it would trip on are
//! rewritten in a copy, so that it finds the data as poppler and pdf.js find it.
//!
//! Refused, because lopdf would allocate or recurse without a bound: object and
//! cross-reference streams that decode past the document's budget, a cross-reference
//! stream whose `/W` widths are not 0–8 bytes or sum to nothing, and predictor rows
//! longer than the stream limit. Mended: a `/Length` that is wrong, or that refers to
//! anything but a plain number (itself, another stream, a missing object): it becomes the
//! length the data really has, or goes, and the data then ends at `endstream`.

use std::io::Read;
use std::ops::Range;

use super::filters::{ascii85, ascii_hex, inflate, lzw, run_length, STREAM_LIMIT};
use super::{Budget, Fail};

/// A change to the file's bytes: `range` is replaced by `with`, of the same length, so
/// every offset in the file stays true.
#[derive(Debug, PartialEq)]
pub(crate) struct Patch {
    pub(crate) range: Range<usize>,
    pub(crate) with: Vec<u8>,
}

/// Applies patches to a copy of `bytes`.
pub(crate) fn apply(bytes: &[u8], patches: &[Patch]) -> Vec<u8> {
    let mut out = bytes.to_vec();
    for p in patches {
        out[p.range.clone()].copy_from_slice(&p.with);
    }
    out
}

/// Checks the streams of `bytes` (see the module's documentation) and returns the
/// patches their lengths need, in file order.
pub(crate) fn check(bytes: &[u8], budget: &mut Budget) -> Result<Vec<Patch>, Fail> {
    let finder = memchr::memmem::Finder::new(b"stream");
    let mut from = 0;
    // Where the previous stream's keyword was: a dictionary never starts before it, so the
    // backward searches below read each byte of the file at most once.
    let mut floor = 0;
    let mut patches = Vec::new();
    let mut offsets = None;
    // Tokens lopdf will parse into objects: the file outside stream data, and the data of
    // object streams.
    let mut tokens = Tokens::default();
    let mut counted_to = 0;
    while let Some(found) = finder.find(&bytes[from..]) {
        let at = from + found;
        from = at + 6;
        if at >= 3 && &bytes[at - 3..at] == b"end" {
            continue;
        }
        let Some(open) = memchr::memmem::rfind(&bytes[floor..at], b"obj").map(|o| floor + o) else {
            continue;
        };
        floor = at;
        budget.tick()?;
        if counted_to < at {
            tokens.feed(&bytes[counted_to..at]);
            counted_to = at;
        }
        let raw = &bytes[open..at];
        let dict = unescape_names(raw);
        let data = data_start(bytes, at + 6);
        // The length, checked against the data as lopdf reads it: exactly that many bytes,
        // an optional end of line, then `endstream`.
        let mut known_end = None;
        if let (Some(data), Some(entry)) = (data, length_entry(raw)) {
            let lopdf_reads =
                |n: i64| usize::try_from(n).ok().and_then(|n| data.checked_add(n)).filter(|&end| ends_at(bytes, end));
            let at_file = |r: &Range<usize>| open + r.start..open + r.end;
            match entry.value {
                LengthValue::Direct(n) => match lopdf_reads(n) {
                    Some(end) => known_end = Some(end),
                    None => patches.push(blank(at_file(&entry.whole))),
                },
                LengthValue::Indirect(num) => {
                    let offsets = offsets.get_or_insert_with(|| super::repair::object_offsets(bytes));
                    let target = offsets.get(&num).and_then(|&(_, offset)| plain_number(bytes, offset));
                    match target.and_then(|n| lopdf_reads(n).map(|end| (n, end))) {
                        Some((_, end)) if target_is_plain(bytes, offsets, num) => known_end = Some(end),
                        Some((n, end)) => {
                            known_end = Some(end);
                            patches.push(direct(at_file(&entry.value_span), at_file(&entry.whole), n));
                        }
                        None => patches.push(blank(at_file(&entry.whole))),
                    }
                }
            }
        }
        let objstm = has_name(&dict, b"/ObjStm");
        let xref = has_name(&dict, b"/XRef");
        if objstm || xref {
            check_predictor_row(&dict)?;
            let start = data.unwrap_or(at + 6);
            let end = known_end.unwrap_or_else(|| {
                memchr::memmem::find(&bytes[start..], b"endstream").map_or(bytes.len(), |e| start + e)
            });
            let limit = STREAM_LIMIT.min(budget.inflate_left());
            let decoded = measure(&bytes[start..end.max(start)], &dict, limit, &mut tokens)?;
            if xref {
                check_xref_fields(&dict)?;
            }
            budget.inflated(decoded.unwrap_or((end - start) as u64))?;
        }
        budget.object_tokens(tokens.count)?;
        // Data of a known length is not searched for keywords: binary data that happens to
        // hold "stream" is not taken for a dictionary.
        if let Some(end) = known_end {
            from = from.max(end);
            floor = from;
            counted_to = counted_to.max(end);
        }
    }
    tokens.feed(&bytes[counted_to.min(bytes.len())..]);
    budget.object_tokens(tokens.count)?;
    Ok(patches)
}

/// Counts the tokens of PDF syntax, from above: each run of regular characters, and each
/// `[` and `<` (arrays and dictionaries are objects too). Words inside strings count, so
/// the count errs high.
#[derive(Default)]
struct Tokens {
    count: usize,
    in_run: bool,
}

impl Tokens {
    fn feed(&mut self, data: &[u8]) {
        for &b in data {
            let regular = !(b.is_ascii_whitespace() || b == 0 || b"()<>[]{}/%".contains(&b));
            if regular && !self.in_run {
                self.count += 1;
            }
            if b == b'[' || b == b'<' {
                self.count += 1;
            }
            self.in_run = regular;
        }
    }
}

/// Where a stream's data starts after its `stream` keyword, as lopdf reads it: spaces or
/// tabs, then one end of line. `None` when no end of line follows (lopdf cannot read it).
fn data_start(bytes: &[u8], mut i: usize) -> Option<usize> {
    while matches!(bytes.get(i), Some(b' ' | b'\t')) {
        i += 1;
    }
    match bytes.get(i..i + 2) {
        Some(b"\r\n") => Some(i + 2),
        _ => matches!(bytes.get(i), Some(b'\n' | b'\r')).then_some(i + 1),
    }
}

/// Whether `endstream` follows `end`, after at most one end of line.
fn ends_at(bytes: &[u8], end: usize) -> bool {
    let Some(rest) = bytes.get(end..) else { return false };
    let rest = rest
        .strip_prefix(b"\r\n")
        .or_else(|| rest.strip_prefix(b"\n"))
        .or_else(|| rest.strip_prefix(b"\r"))
        .unwrap_or(rest);
    rest.starts_with(b"endstream")
}

/// A `/Length` entry: the whole entry (from the slash) and its value, as ranges of the
/// dictionary's bytes.
struct LengthEntry {
    whole: Range<usize>,
    value_span: Range<usize>,
    value: LengthValue,
}

enum LengthValue {
    Direct(i64),
    Indirect(u32),
}

/// The last `/Length` of a stream dictionary (a whole name: not `/Length1`), if its value
/// is an integer or a reference.
fn length_entry(dict: &[u8]) -> Option<LengthEntry> {
    let at = memchr::memmem::rfind_iter(dict, b"/Length")
        .find(|&a| dict.get(a + 7).is_none_or(|&b| !b.is_ascii_alphanumeric() && b != b'#'))?;
    let mut i = at + 7;
    let mut word = || {
        while dict.get(i).is_some_and(u8::is_ascii_whitespace) {
            i += 1;
        }
        let start = i;
        while dict.get(i).is_some_and(|b| b.is_ascii_digit() || matches!(b, b'+' | b'-' | b'.' | b'R')) {
            i += 1;
            if dict[i - 1] == b'R' {
                break;
            }
        }
        (start < i).then(|| (start..i, &dict[start..i]))
    };
    let (first_span, first) = word()?;
    let parse = |w: &[u8]| std::str::from_utf8(w).ok()?.parse::<i64>().ok();
    let n = parse(first)?;
    if word().is_some_and(|(_, w)| w.iter().all(u8::is_ascii_digit)) {
        if let Some((r_span, b"R")) = word() {
            let span = first_span.start..r_span.end;
            return Some(LengthEntry {
                whole: at..span.end,
                value_span: span,
                value: LengthValue::Indirect(u32::try_from(n).ok()?),
            });
        }
    }
    Some(LengthEntry { whole: at..first_span.end, value_span: first_span, value: LengthValue::Direct(n) })
}

/// The integer an object holds, read as readers do: after `obj`, white space and comments,
/// then digits (`59endobj` is 59).
fn plain_number(bytes: &[u8], offset: usize) -> Option<i64> {
    let body = &bytes[offset..bytes.len().min(offset + 256)];
    let mut i = memchr::memmem::find(body, b"obj")? + 3;
    loop {
        match body.get(i) {
            Some(b) if b.is_ascii_whitespace() => i += 1,
            Some(b'%') => {
                while body.get(i).is_some_and(|&b| b != b'\n' && b != b'\r') {
                    i += 1;
                }
            }
            _ => break,
        }
    }
    let start = i;
    while body.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    if start == i || body.get(i).is_some_and(|&b| b == b'.' || b.is_ascii_digit()) {
        return None;
    }
    std::str::from_utf8(&body[start..i]).ok()?.parse().ok()
}

/// Whether lopdf itself would read the object as a number: `obj`, white space, digits,
/// white space, `endobj`, as the check before this module allowed.
fn target_is_plain(bytes: &[u8], offsets: &std::collections::BTreeMap<u32, (u16, usize)>, num: u32) -> bool {
    let Some(&(_, offset)) = offsets.get(&num) else { return false };
    let body = &bytes[offset..bytes.len().min(offset + 64)];
    let Some(obj) = memchr::memmem::find(body, b"obj") else { return false };
    let mut words = body[obj + 3..].split(|b| b.is_ascii_whitespace()).filter(|w| !w.is_empty());
    words.next().is_some_and(|w| w.iter().all(u8::is_ascii_digit))
        && words.next().is_some_and(|w| w.starts_with(b"endobj"))
}

/// A patch that writes `n` over a reference's span (`12 0 R`), padded with spaces; when
/// it does not fit, the whole entry goes.
fn direct(span: Range<usize>, whole: Range<usize>, n: i64) -> Patch {
    let digits = n.to_string().into_bytes();
    if digits.len() > span.len() {
        return blank(whole);
    }
    let mut with = digits;
    with.resize(span.len(), b' ');
    Patch { range: span, with }
}

/// A patch that removes an entry (spaces in its place).
fn blank(range: Range<usize>) -> Patch {
    Patch { with: vec![b' '; range.len()], range }
}

/// A dictionary's bytes with `#xx` escapes in names resolved (`/Obj#53tm` is `/ObjStm`);
/// borrowed when there is none, as in nearly every file.
fn unescape_names(dict: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    if memchr::memchr(b'#', dict).is_none() {
        return std::borrow::Cow::Borrowed(dict);
    }
    let mut out = Vec::with_capacity(dict.len());
    let mut i = 0;
    while i < dict.len() {
        if dict[i] == b'#' {
            if let (Some(h), Some(l)) =
                (dict.get(i + 1).and_then(|&b| hex_digit(b)), dict.get(i + 2).and_then(|&b| hex_digit(b)))
            {
                out.push(h << 4 | l);
                i += 3;
                continue;
            }
        }
        out.push(dict[i]);
        i += 1;
    }
    std::borrow::Cow::Owned(out)
}

fn hex_digit(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

/// Whether `name` stands in `dict` as a whole name (`/XRef`, not `/XRefStm`).
fn has_name(dict: &[u8], name: &[u8]) -> bool {
    memchr::memmem::find_iter(dict, name)
        .any(|at| dict.get(at + name.len()).is_none_or(|&b| !b.is_ascii_alphanumeric()))
}

/// The filters a dictionary names, in order.
fn filter_names(dict: &[u8]) -> Vec<Vec<u8>> {
    let Some(at) = memchr::memmem::find(dict, b"/Filter") else { return Vec::new() };
    let rest = &dict[at + 7..];
    let rest = &rest[rest.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(rest.len())..];
    let body = match rest.strip_prefix(b"[") {
        Some(r) => &r[..r.iter().position(|&b| b == b']').unwrap_or(r.len())],
        None => {
            &rest[..rest
                .iter()
                .skip(1)
                .position(|&b| b == b'/' || b == b'>' || b.is_ascii_whitespace())
                .map_or(rest.len(), |p| p + 1)]
        }
    };
    body.split(|&b| b == b'/' || b.is_ascii_whitespace()).filter(|n| !n.is_empty()).map(<[u8]>::to_vec).collect()
}

/// Counts what a reader yields, up to `limit + 1` bytes, keeping the count of what came
/// before an error: damaged data (a deflate stream without its final block) still counts.
fn count(reader: &mut dyn Read, limit: u64, tokens: &mut Tokens) -> u64 {
    let mut buf = [0u8; 16 * 1024];
    let mut n = 0u64;
    while n <= limit {
        match reader.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(k) => {
                n += k as u64;
                tokens.feed(&buf[..k]);
            }
        }
    }
    n
}

/// How many bytes `data` decodes to through the filters `dict` names, up to `limit`
/// (more is an error); `None` when a filter is one lopdf cannot decode (then lopdf
/// cannot unpack it either). Damaged data counts what decoded before the damage; Flate
/// counts the larger of a zlib and a raw-deflate reading, as lopdf tries both.
fn measure(data: &[u8], dict: &[u8], limit: u64, tokens: &mut Tokens) -> Result<Option<u64>, Fail> {
    let filters = filter_names(dict);
    let mut owned;
    let mut current: &[u8] = data;
    for (i, filter) in filters.iter().enumerate() {
        let last = i + 1 == filters.len();
        let next = match filter.as_slice() {
            b"FlateDecode" | b"Fl" if last => {
                // lopdf reads zlib, and when that fails, raw deflate after the two header bytes.
                // The reading that gives the most is the one counted.
                let raw = current.get(2..).unwrap_or_default();
                let mut best = (0, Tokens::default());
                let readers: [&mut dyn Read; 3] = [
                    &mut flate2::read::ZlibDecoder::new(current),
                    &mut flate2::read::DeflateDecoder::new(current),
                    &mut flate2::read::DeflateDecoder::new(raw),
                ];
                for reader in readers {
                    let mut t = Tokens::default();
                    let n = count(reader, limit, &mut t);
                    if n > best.0 {
                        best = (n, t);
                    }
                }
                tokens.count += best.1.count;
                return if best.0 > limit { Err(too_big()) } else { Ok(Some(best.0)) };
            }
            b"FlateDecode" | b"Fl" => inflate(current, limit)?,
            b"LZWDecode" | b"LZW" => lzw(current, None, limit)?,
            b"ASCIIHexDecode" | b"AHx" => ascii_hex(current),
            b"ASCII85Decode" | b"A85" => ascii85(current, limit)?,
            b"RunLengthDecode" | b"RL" => run_length(current, limit)?,
            _ => return Ok(None),
        };
        owned = next;
        current = &owned;
    }
    tokens.feed(current);
    Ok(Some(current.len() as u64))
}

fn too_big() -> Fail {
    Fail::Invalid(format!("a stream decodes to more than {} MiB (a decompression bomb?)", STREAM_LIMIT >> 20))
}

/// The integers of `[ … ]` after `key` in `dict`.
fn integers_after(dict: &[u8], key: &[u8]) -> Option<Vec<Option<i64>>> {
    let at = memchr::memmem::find_iter(dict, key)
        .find(|&a| dict.get(a + key.len()).is_none_or(|&b| !b.is_ascii_alphanumeric()))?;
    let rest = &dict[at + key.len()..];
    let rest = &rest[rest.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(rest.len())..];
    let body = rest.strip_prefix(b"[")?;
    let body = &body[..body.iter().position(|&b| b == b']').unwrap_or(body.len())];
    Some(
        body.split(|b| b.is_ascii_whitespace())
            .filter(|w| !w.is_empty())
            .map(|w| std::str::from_utf8(w).ok().and_then(|w| w.parse::<i64>().ok()))
            .collect(),
    )
}

/// Checks a cross-reference stream's field widths: lopdf allocates each as given, and
/// loops over `/Index` without reading when every width is 0. Entries beyond the data
/// are not refused: lopdf stops at the end of the data with an error, and the table is
/// then rebuilt.
fn check_xref_fields(dict: &[u8]) -> Result<(), Fail> {
    let bad = |why: &str| Err(Fail::Invalid(format!("its cross-reference stream {why}")));
    let Some(widths) = integers_after(dict, b"/W") else { return Ok(()) };
    let widths: Option<Vec<i64>> = widths.into_iter().collect();
    let Some(widths) = widths.filter(|w| w.len() >= 3 && w.iter().all(|n| (0..=8).contains(n))) else {
        return bad("has fields wider than 8 bytes");
    };
    if widths.iter().sum::<i64>() == 0 {
        return bad("has entries of no bytes");
    }
    Ok(())
}

/// The number after `key` in `dict` (a whole name: `/Colors`, not `/ColorSpace`).
fn number_after(dict: &[u8], key: &[u8]) -> Option<i64> {
    let at = memchr::memmem::find_iter(dict, key)
        .find(|&a| dict.get(a + key.len()).is_none_or(|&b| !b.is_ascii_alphanumeric()))?;
    let rest = std::str::from_utf8(&dict[at + key.len()..dict.len().min(at + key.len() + 24)]).ok()?;
    rest.split(|c: char| c.is_ascii_whitespace() || c == '/' || c == '>').find(|w| !w.is_empty())?.parse().ok()
}

/// lopdf allocates a predictor's row as `/Columns` × `/Colors` × `/BitsPerComponent`
/// say, zero-filled: a row over the stream limit is refused before it can.
fn check_predictor_row(dict: &[u8]) -> Result<(), Fail> {
    let columns = number_after(dict, b"/Columns").unwrap_or(1);
    let colors = number_after(dict, b"/Colors").unwrap_or(1);
    let bits = number_after(dict, b"/BitsPerComponent").unwrap_or(8);
    let row = i128::from(columns) * i128::from(colors) * i128::from(bits) / 8;
    if !(0..=i128::from(STREAM_LIMIT)).contains(&row) {
        return Err(Fail::Invalid(format!("a stream's predictor rows are {row} bytes long")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cancel::Cancel;
    use std::io::Write;

    fn checked(bytes: &[u8]) -> Result<Vec<Patch>, Fail> {
        let cancel = Cancel::new();
        let mut budget = Budget::new(bytes, std::time::Duration::from_secs(5), &cancel);
        check(bytes, &mut budget)
    }

    #[test]
    fn xref_fields_are_checked() {
        assert!(check_xref_fields(b"1 0 obj << /Type /XRef /W [1 2 1] /Size 3 >>").is_ok());
        assert!(check_xref_fields(b"1 0 obj << /Type /XRef /W [1 99999999999 1] >>").is_err());
        assert!(check_xref_fields(b"1 0 obj << /W[1 -2 1] >>").is_err());
        assert!(check_xref_fields(b"1 0 obj << /W [0 0 0] /Size 3 >>").is_err());
        // More entries than data: lopdf stops at the end of its data; not refused here.
        assert!(check_xref_fields(b"1 0 obj << /W [1 2 1] /Size 4000000 >>").is_ok());
        assert!(check_xref_fields(b"1 0 obj << /Width 12 /Size 3 >>").is_ok());
    }

    #[test]
    fn predictor_rows_are_bounded() {
        assert!(check_predictor_row(b"/DecodeParms << /Predictor 12 /Columns 5 >>").is_ok());
        assert!(check_predictor_row(b"/DecodeParms << /Predictor 12 /Columns 99999999999 /Colors 4 >>").is_err());
        assert!(check_predictor_row(b"/DecodeParms << /Columns -3 >>").is_err());
        assert_eq!(number_after(b"/ColorSpace /DeviceRGB /Colors 3", b"/Colors"), Some(3));
    }

    #[test]
    fn names_filters_and_lengths_are_read_as_lopdf_reads_them() {
        let dict = unescape_names(b"5 0 obj << /Type /Obj#53tm /Filter [/AHx /FlateDecode] /Length1 7 /Length 9 0 R");
        assert!(has_name(&dict, b"/ObjStm"));
        assert!(!has_name(b"<< /XRefStm 12 >>", b"/XRef"));
        assert_eq!(filter_names(&dict), vec![b"AHx".to_vec(), b"FlateDecode".to_vec()]);
        assert_eq!(filter_names(b"<< /Filter/FlateDecode/Length 3 >>"), vec![b"FlateDecode".to_vec()]);
        let entry = length_entry(&dict).unwrap();
        assert!(matches!(entry.value, LengthValue::Indirect(9)));
        assert_eq!(&dict[entry.whole.clone()], b"/Length 9 0 R");
        assert_eq!(&dict[entry.value_span], b"9 0 R");
        let entry = length_entry(b"<< /Length 12/Length1 5 >>").unwrap();
        assert!(matches!(entry.value, LengthValue::Direct(12)));
        let raw = {
            let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
            e.write_all(&vec![0u8; 1 << 20]).unwrap();
            e.finish().unwrap()
        };
        assert!(matches!(measure(&raw, b"/Filter /FlateDecode", 1000, &mut Tokens::default()), Err(Fail::Invalid(_))));
        assert_eq!(measure(&raw, b"/Filter /FlateDecode", 2 << 20, &mut Tokens::default()).unwrap(), Some(1 << 20));
        assert_eq!(measure(b"xyz", b"/Filter /BrotliDecode", 100, &mut Tokens::default()).unwrap(), None);
    }

    /// Issue 22: a Flate stream whose final block is missing decodes up to where it stops;
    /// counting it as nothing made the file look like it lied about its entries.
    #[test]
    fn a_deflate_stream_without_its_final_block_counts_what_it_gave() {
        let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(&b"0123456789".repeat(1000)).unwrap();
        e.flush().unwrap(); // a sync flush: the data so far, in blocks that are not final
        let n = measure(e.get_ref(), b"/Filter /FlateDecode", 1 << 20, &mut Tokens::default()).unwrap().unwrap();
        assert_eq!(n, 10_000);
    }

    #[test]
    fn lengths_lopdf_would_trip_on_are_mended() {
        let file = b"1 0 obj << /Length 3 >>\nstream\nabcdef\nendstream\nendobj\n2 0 obj << /Length 6 >>\nstream\nabcdef\nendstream\nendobj\n3 0 obj << /Length 9 0 R >>\nstream\nabcdef\nendstream\nendobj\n9 0 obj\n6endobj\n4 0 obj << /Length 4 0 R >>\nstream\nabc\nendstream\nendobj\n";
        let patches = checked(file).unwrap();
        let fixed = String::from_utf8(apply(file, &patches)).unwrap();
        // Wrong direct length: gone; right one: kept; `6endobj`: written in; itself: gone.
        let gone = |n: usize| " ".repeat(n);
        assert!(fixed.starts_with(&format!("1 0 obj << {} >>", gone(9))), "{fixed}");
        assert!(fixed.contains("2 0 obj << /Length 6 >>"), "{fixed}");
        assert!(fixed.contains("3 0 obj << /Length 6     >>"), "{fixed}");
        assert!(fixed.contains(&format!("4 0 obj << {} >>", gone(13))), "{fixed}");
        assert_eq!(fixed.len(), file.len());
    }

    #[test]
    fn tokens_are_counted_from_above() {
        let mut t = Tokens::default();
        t.feed(b"1 0 obj << /Type /Page /Kids [3 0 R 4 0 R] >> endobj");
        // 1 0 obj, <<, Type, Page, Kids, [, 3 0 R 4 0 R, (> counts nothing), endobj
        assert_eq!(t.count, 3 + 2 + 3 + 1 + 6 + 1);
        let mut split = Tokens::default();
        split.feed(b"12");
        split.feed(b"34 5");
        assert_eq!(split.count, 2, "a run split across reads is one token");
    }

    #[test]
    fn a_plain_indirect_length_needs_no_patch() {
        let file = b"1 0 obj << /Length 2 0 R >>\nstream\nabc\nendstream\nendobj\n2 0 obj\n3\nendobj\n";
        assert!(checked(file).unwrap().is_empty());
        assert_eq!(plain_number(b"7 0 obj % note\n 42 endobj", 0), Some(42));
        assert_eq!(plain_number(b"7 0 obj 4.5 endobj", 0), None);
    }
}
