//! Stream decoding with bounds: every decoder stops at a byte limit, so a decompression
//! bomb costs at most that much memory, and damaged data gives what decoded before the
//! damage (as readers do) rather than nothing.

use std::io::Read;

use lopdf::{Dictionary, Document, Object, Stream};

use super::{resolve, Budget, Fail};

/// The most one stream may decode to.
pub(crate) const STREAM_LIMIT: u64 = 64 * 1024 * 1024;

/// Decodes a stream's data through its filters, within the budget.
pub(crate) fn decode(doc: &Document, stream: &Stream, budget: &mut Budget) -> Result<Vec<u8>, Fail> {
    let filters = names(doc, stream.dict.get(b"Filter").ok());
    let params = stream.dict.get(b"DecodeParms").ok().map(|p| resolve(doc, p));
    let counted = budget.first_decoding(stream as *const Stream as usize);
    let mut data = if stream.content.is_empty() { unmeasured(stream, budget.file) } else { stream.content.clone() };
    for (i, filter) in filters.iter().enumerate() {
        let param = match params {
            Some(Object::Array(list)) => list.get(i).map(|p| resolve(doc, p)).and_then(|p| p.as_dict().ok()),
            Some(Object::Dictionary(d)) if i == 0 => Some(d),
            _ => None,
        };
        let limit = STREAM_LIMIT.min(if counted { budget.inflate_left() } else { STREAM_LIMIT });
        data = match filter.as_slice() {
            b"FlateDecode" | b"Fl" => predict(inflate(&data, limit)?, param)?,
            b"LZWDecode" | b"LZW" => predict(lzw(&data, param, limit)?, param)?,
            b"ASCIIHexDecode" | b"AHx" => ascii_hex(&data),
            b"ASCII85Decode" | b"A85" => ascii85(&data),
            b"RunLengthDecode" | b"RL" => run_length(&data, limit)?,
            b"Crypt" => data,
            // Image codecs hold no text.
            _ => return Ok(Vec::new()),
        };
        if counted {
            budget.inflated(data.len() as u64)?;
        }
    }
    Ok(data)
}

/// The data of a stream lopdf left empty because its `/Length` was missing: from where
/// the data starts up to `endstream`, as readers recover it.
fn unmeasured(stream: &Stream, file: &[u8]) -> Vec<u8> {
    let Some(start) = stream.start_position.filter(|&s| s < file.len()) else {
        return Vec::new();
    };
    let rest = &file[start..];
    let end = memchr::memmem::find(rest, b"endstream").unwrap_or(rest.len());
    let mut data = &rest[..end];
    if let Some(d) = data.strip_suffix(b"\n") {
        data = d.strip_suffix(b"\r").unwrap_or(d);
    }
    data.to_vec()
}

fn names(doc: &Document, filter: Option<&Object>) -> Vec<Vec<u8>> {
    match filter.map(|f| resolve(doc, f)) {
        Some(Object::Name(n)) => vec![n.clone()],
        Some(Object::Array(list)) => {
            list.iter().filter_map(|f| resolve(doc, f).as_name().ok().map(<[u8]>::to_vec)).collect()
        }
        _ => Vec::new(),
    }
}

fn too_big() -> Fail {
    Fail::Invalid(format!("a stream decodes to more than {} MiB (a decompression bomb?)", STREAM_LIMIT >> 20))
}

/// Inflates zlib data (or raw deflate when the zlib header is missing), keeping what
/// decoded before any damage.
pub(crate) fn inflate(data: &[u8], limit: u64) -> Result<Vec<u8>, Fail> {
    let mut out = Vec::new();
    let zlib = data.len() >= 2 && (u16::from(data[0]) << 8 | u16::from(data[1])) % 31 == 0 && data[0] & 0x0f == 8;
    let result = if zlib {
        flate2::read::ZlibDecoder::new(data).take(limit + 1).read_to_end(&mut out)
    } else {
        flate2::read::DeflateDecoder::new(data).take(limit + 1).read_to_end(&mut out)
    };
    if out.len() as u64 > limit {
        return Err(too_big());
    }
    drop(result);
    Ok(out)
}

pub(crate) fn lzw(data: &[u8], param: Option<&Dictionary>, limit: u64) -> Result<Vec<u8>, Fail> {
    let early = param.and_then(|p| p.get(b"EarlyChange").ok()).and_then(|e| e.as_i64().ok()).unwrap_or(1);
    let mut decoder = if early == 0 {
        weezl::decode::Decoder::new(weezl::BitOrder::Msb, 8)
    } else {
        weezl::decode::Decoder::with_tiff_size_switch(weezl::BitOrder::Msb, 8)
    };
    let mut out = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut input = data;
    loop {
        let r = decoder.decode_bytes(input, &mut buf);
        out.extend_from_slice(&buf[..r.consumed_out]);
        input = &input[r.consumed_in..];
        if out.len() as u64 > limit {
            return Err(too_big());
        }
        match r.status {
            Ok(weezl::LzwStatus::Ok) if r.consumed_in + r.consumed_out > 0 => {}
            _ => break,
        }
    }
    Ok(out)
}

/// Undoes PNG (10–15) and TIFF (2) predictors.
pub(crate) fn predict(data: Vec<u8>, param: Option<&Dictionary>) -> Result<Vec<u8>, Fail> {
    let get =
        |key: &[u8], default: i64| param.and_then(|p| p.get(key).ok()).and_then(|v| v.as_i64().ok()).unwrap_or(default);
    let predictor = get(b"Predictor", 1);
    if predictor < 2 {
        return Ok(data);
    }
    let colors = get(b"Colors", 1).clamp(1, 32) as usize;
    let bits = get(b"BitsPerComponent", 8).clamp(1, 16) as usize;
    let columns = get(b"Columns", 1).clamp(1, 1 << 20) as usize;
    let bpp = (colors * bits).div_ceil(8).max(1);
    let row = (colors * bits * columns).div_ceil(8);
    if predictor == 2 {
        let mut data = data;
        if bits == 8 {
            for line in data.chunks_mut(row) {
                for i in bpp..line.len() {
                    line[i] = line[i].wrapping_add(line[i - bpp]);
                }
            }
        }
        return Ok(data);
    }
    let mut out = Vec::with_capacity(data.len());
    let mut prev = vec![0u8; row];
    for chunk in data.chunks(row + 1) {
        let (&kind, line) = chunk.split_first().unwrap_or((&0, &[]));
        let mut cur = line.to_vec();
        cur.resize(row, 0);
        for i in 0..row {
            let left = if i >= bpp { cur[i - bpp] } else { 0 };
            let up = prev[i];
            let up_left = if i >= bpp { prev[i - bpp] } else { 0 };
            cur[i] = match kind {
                1 => cur[i].wrapping_add(left),
                2 => cur[i].wrapping_add(up),
                3 => cur[i].wrapping_add(((u16::from(left) + u16::from(up)) / 2) as u8),
                4 => cur[i].wrapping_add(paeth(left, up, up_left)),
                _ => cur[i],
            };
        }
        out.extend_from_slice(&cur[..line.len().min(row)]);
        prev = cur;
    }
    Ok(out)
}

fn paeth(a: u8, b: u8, c: u8) -> u8 {
    let p = i16::from(a) + i16::from(b) - i16::from(c);
    let (pa, pb, pc) = ((p - i16::from(a)).abs(), (p - i16::from(b)).abs(), (p - i16::from(c)).abs());
    if pa <= pb && pa <= pc {
        a
    } else if pb <= pc {
        b
    } else {
        c
    }
}

pub(crate) fn ascii_hex(data: &[u8]) -> Vec<u8> {
    super::lexer::decode_hex(data).0
}

pub(crate) fn ascii85(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() * 4 / 5);
    let mut group = [0u8; 5];
    let mut n = 0;
    let body = data.strip_prefix(b"<~").unwrap_or(data);
    for &b in body {
        match b {
            b'~' => break,
            b'z' if n == 0 => out.extend_from_slice(&[0; 4]),
            b'!'..=b'u' => {
                group[n] = b - b'!';
                n += 1;
                if n == 5 {
                    let v = group.iter().fold(0u64, |acc, &d| acc * 85 + u64::from(d));
                    out.extend_from_slice(&(v as u32).to_be_bytes());
                    n = 0;
                }
            }
            _ => {}
        }
    }
    if n > 1 {
        for slot in group.iter_mut().skip(n) {
            *slot = 84;
        }
        let v = group.iter().fold(0u64, |acc, &d| acc * 85 + u64::from(d));
        out.extend_from_slice(&(v as u32).to_be_bytes()[..n - 1]);
    }
    out
}

pub(crate) fn run_length(data: &[u8], limit: u64) -> Result<Vec<u8>, Fail> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < data.len() {
        let len = data[i];
        i += 1;
        match len {
            128 => break,
            0..=127 => {
                let end = (i + usize::from(len) + 1).min(data.len());
                out.extend_from_slice(&data[i..end]);
                i = end;
            }
            _ => {
                if let Some(&b) = data.get(i) {
                    out.resize(out.len() + 257 - usize::from(len), b);
                }
                i += 1;
            }
        }
        if out.len() as u64 > limit {
            return Err(too_big());
        }
    }
    Ok(out)
}

/// Looks at the streams lopdf unpacks on load, without a bound, before it does: every
/// object stream (`/Type /ObjStm`) and cross-reference stream (`/Type /XRef`) is decoded
/// here, counting and dropping the bytes, and a file whose streams would decode past the
/// budget is refused. Names are read with their `#xx` escapes resolved, and zlib, raw
/// deflate, LZW, ASCII85, ASCIIHex and RunLength all count.
///
/// Also refused, because lopdf would allocate or recurse without a bound on them: a
/// cross-reference stream whose `/W` widths are not 0–8 bytes, sum to nothing, or whose
/// `/Index` names more entries than its data holds; and a `/Length N G R` that leads to
/// anything but a plain number (a chain of them overflows lopdf's stack).
pub(crate) fn check_unpacked_streams(bytes: &[u8], budget: &mut Budget) -> Result<(), Fail> {
    let finder = memchr::memmem::Finder::new(b"stream");
    let mut from = 0;
    // Where the previous stream's data began: a dictionary never starts before it, so the
    // backward searches below read each byte of the file at most once.
    let mut floor = 0;
    let mut length_targets: Vec<u32> = Vec::new();
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
        let dict = unescape_names(&bytes[open..at]);
        if let Some(target) = indirect_length(&dict) {
            length_targets.push(target);
        }
        let objstm = has_name(&dict, b"/ObjStm");
        let xref = has_name(&dict, b"/XRef");
        if !objstm && !xref {
            continue;
        }
        check_predictor_row(&dict)?;
        let mut start = at + 6;
        if bytes.get(start) == Some(&b'\r') {
            start += 1;
        }
        if bytes.get(start) == Some(&b'\n') {
            start += 1;
        }
        let end = memchr::memmem::find(&bytes[start..], b"endstream").map_or(bytes.len(), |e| start + e);
        let limit = STREAM_LIMIT.min(budget.inflate_left());
        let decoded = measure(&bytes[start..end], &dict, limit)?;
        if xref {
            check_xref_fields(&dict, decoded)?;
        }
        budget.inflated(decoded)?;
    }
    if !length_targets.is_empty() {
        check_lengths(bytes, &length_targets)?;
    }
    Ok(())
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

/// How many bytes `data` decodes to through the filters `dict` names, up to `limit`
/// (more is an error). Damaged data counts what decoded before the damage; Flate counts
/// the larger of a zlib and a raw-deflate reading, as lopdf tries both.
fn measure(data: &[u8], dict: &[u8], limit: u64) -> Result<u64, Fail> {
    let filters = filter_names(dict);
    let mut owned;
    let mut current: &[u8] = data;
    for (i, filter) in filters.iter().enumerate() {
        let last = i + 1 == filters.len();
        let next = match filter.as_slice() {
            b"FlateDecode" | b"Fl" if last => {
                let count = |r: &mut dyn Read| std::io::copy(&mut r.take(limit + 1), &mut std::io::sink()).unwrap_or(0);
                // lopdf reads zlib, and when that fails, raw deflate after the two header bytes.
                let raw = current.get(2..).unwrap_or_default();
                let n = count(&mut flate2::read::ZlibDecoder::new(current))
                    .max(count(&mut flate2::read::DeflateDecoder::new(current)))
                    .max(count(&mut flate2::read::DeflateDecoder::new(raw)));
                return if n > limit { Err(too_big()) } else { Ok(n) };
            }
            b"FlateDecode" | b"Fl" => inflate(current, limit)?,
            b"LZWDecode" | b"LZW" => lzw(current, None, limit)?,
            b"ASCIIHexDecode" | b"AHx" => ascii_hex(current),
            b"ASCII85Decode" | b"A85" => ascii85(current),
            b"RunLengthDecode" | b"RL" => run_length(current, limit)?,
            _ => return Ok(current.len() as u64),
        };
        owned = next;
        current = &owned;
    }
    Ok(current.len() as u64)
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

/// Checks a cross-reference stream's field widths against the data it has.
fn check_xref_fields(dict: &[u8], decoded: u64) -> Result<(), Fail> {
    let bad = |why: &str| Err(Fail::Invalid(format!("its cross-reference stream {why}")));
    let Some(widths) = integers_after(dict, b"/W") else { return Ok(()) };
    let widths: Option<Vec<i64>> = widths.into_iter().collect();
    let Some(widths) = widths.filter(|w| w.len() >= 3 && w.iter().all(|n| (0..=8).contains(n))) else {
        return bad("has fields wider than 8 bytes");
    };
    let per_entry: i64 = widths.iter().sum();
    if per_entry == 0 {
        return bad("has entries of no bytes");
    }
    let entries: i64 = match integers_after(dict, b"/Index") {
        Some(index) => index.iter().skip(1).step_by(2).map(|n| n.unwrap_or(0).max(0)).fold(0i64, i64::saturating_add),
        None => {
            let size = memchr::memmem::find(dict, b"/Size").and_then(|a| {
                let rest = std::str::from_utf8(&dict[a + 5..dict.len().min(a + 30)]).ok()?;
                rest.split(|c: char| !c.is_ascii_digit()).find(|w| !w.is_empty())?.parse::<i64>().ok()
            });
            size.unwrap_or(0)
        }
    };
    if entries.saturating_mul(per_entry) > decoded as i64 + per_entry {
        return bad(&format!("lists {entries} entries but holds data for {}", decoded as i64 / per_entry));
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

/// The object number of a `/Length N G R`, when the length is a reference.
fn indirect_length(dict: &[u8]) -> Option<u32> {
    let at = memchr::memmem::rfind(dict, b"/Length")?;
    let rest = std::str::from_utf8(&dict[at + 7..dict.len().min(at + 40)]).ok()?;
    let mut words = rest.split_ascii_whitespace();
    let num = words.next()?.parse().ok()?;
    let _gen: u16 = words.next()?.parse().ok()?;
    words.next()?.starts_with('R').then_some(num)
}

/// Every indirect `/Length` must lead to an object that is a plain number.
fn check_lengths(bytes: &[u8], targets: &[u32]) -> Result<(), Fail> {
    let offsets = super::repair::object_offsets(bytes);
    for target in targets {
        let Some(&(_, offset)) = offsets.get(target) else { continue };
        let body = &bytes[offset..bytes.len().min(offset + 64)];
        let Some(obj) = memchr::memmem::find(body, b"obj") else { continue };
        let mut words = body[obj + 3..].split(|b| b.is_ascii_whitespace()).filter(|w| !w.is_empty());
        let plain = words.next().is_some_and(|w| w.iter().all(u8::is_ascii_digit))
            && words.next().is_some_and(|w| w.starts_with(b"endobj"));
        if !plain {
            return Err(Fail::Invalid(format!("a stream's /Length refers to object {target}, which is not a number")));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn deflate(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn inflate_stops_at_the_limit() {
        let bomb = deflate(&vec![0u8; 1 << 20]);
        assert!(matches!(inflate(&bomb, 1000), Err(Fail::Invalid(_))));
        assert_eq!(inflate(&bomb, 2 << 20).unwrap().len(), 1 << 20);
    }

    #[test]
    fn damaged_flate_keeps_what_decoded() {
        let mut data = deflate(&b"BT (Hello) Tj ET ".repeat(200));
        data.truncate(data.len() - 8);
        let out = inflate(&data, 1 << 20).unwrap();
        assert!(out.starts_with(b"BT (Hello) Tj ET"));
    }

    #[test]
    fn ascii_filters() {
        assert_eq!(ascii_hex(b"48 65 6c6C6f>"), b"Hello");
        assert_eq!(ascii_hex(b"414"), b"A@");
        assert_eq!(ascii85(b"<~87cURD]i,\"Ebo80~>"), b"Hello World!");
        assert_eq!(ascii85(b"z~>"), [0, 0, 0, 0]);
        assert_eq!(run_length(&[2, b'a', b'b', b'c', 254, b'x', 128], 100).unwrap(), b"abcxxx");
    }

    #[test]
    fn xref_fields_are_checked_against_the_data() {
        assert!(check_xref_fields(b"1 0 obj << /Type /XRef /W [1 2 1] /Size 3 >>", 12).is_ok());
        assert!(check_xref_fields(b"1 0 obj << /Type /XRef /W [1 99999999999 1] >>", 12).is_err());
        assert!(check_xref_fields(b"1 0 obj << /W[1 -2 1] >>", 12).is_err());
        assert!(check_xref_fields(b"1 0 obj << /W [0 0 0] /Size 3 >>", 12).is_err());
        assert!(check_xref_fields(b"1 0 obj << /W [1 2 1] /Index [0 4000000000] >>", 12).is_err());
        assert!(check_xref_fields(b"1 0 obj << /W [1 2 1] /Size 4000000 >>", 12).is_err());
        assert!(check_xref_fields(b"1 0 obj << /Width 12 /Size 3 >>", 12).is_ok());
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
        let dict = unescape_names(b"5 0 obj << /Type /Obj#53tm /Filter [/AHx /FlateDecode] /Length 9 0 R");
        assert!(has_name(&dict, b"/ObjStm"));
        assert!(!has_name(b"<< /XRefStm 12 >>", b"/XRef"));
        assert_eq!(filter_names(&dict), vec![b"AHx".to_vec(), b"FlateDecode".to_vec()]);
        assert_eq!(filter_names(b"<< /Filter/FlateDecode/Length 3 >>"), vec![b"FlateDecode".to_vec()]);
        assert_eq!(indirect_length(&dict), Some(9));
        let raw = {
            let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
            e.write_all(&vec![0u8; 1 << 20]).unwrap();
            e.finish().unwrap()
        };
        assert!(matches!(measure(&raw, b"/Filter /FlateDecode", 1000), Err(Fail::Invalid(_))));
        assert_eq!(measure(&raw, b"/Filter /FlateDecode", 2 << 20).unwrap(), 1 << 20);
    }

    #[test]
    fn png_up_predictor() {
        let mut p = Dictionary::new();
        p.set("Predictor", 12);
        p.set("Columns", 3);
        let data = vec![2, 1, 2, 3, 2, 1, 1, 1];
        assert_eq!(predict(data, Some(&p)).unwrap(), vec![1, 2, 3, 2, 3, 4]);
    }
}
