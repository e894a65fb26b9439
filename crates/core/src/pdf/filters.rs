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
            b"ASCII85Decode" | b"A85" => ascii85(&data, limit)?,
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

/// Undoes PNG (10–15) and TIFF (2) predictors. The parameters are checked, not clamped
/// (a clamped row would decode to the wrong bytes), a row over the stream limit is refused,
/// and the work and memory follow the data: a short last row costs its own length.
pub(crate) fn predict(data: Vec<u8>, param: Option<&Dictionary>) -> Result<Vec<u8>, Fail> {
    let get =
        |key: &[u8], default: i64| param.and_then(|p| p.get(key).ok()).and_then(|v| v.as_i64().ok()).unwrap_or(default);
    let predictor = get(b"Predictor", 1);
    if predictor < 2 {
        return Ok(data);
    }
    let (colors, bits, columns) = (get(b"Colors", 1), get(b"BitsPerComponent", 8), get(b"Columns", 1));
    if !(1..=32).contains(&colors) || ![1, 2, 4, 8, 16].contains(&bits) || columns < 1 {
        return Err(Fail::Invalid(format!(
            "a stream's predictor parameters are out of range (/Colors {colors}, /BitsPerComponent {bits}, /Columns {columns})"
        )));
    }
    let row = (i128::from(colors) * i128::from(bits) * i128::from(columns) + 7) / 8;
    if row > i128::from(STREAM_LIMIT) {
        return Err(Fail::Invalid(format!("a stream's predictor rows are {row} bytes long")));
    }
    let (row, bpp) = (row as usize, (colors as usize * bits as usize).div_ceil(8));
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
    let mut prev: Vec<u8> = Vec::new();
    for chunk in data.chunks(row + 1) {
        let (&kind, line) = chunk.split_first().unwrap_or((&0, &[]));
        let mut cur = line.to_vec();
        let up_at = |i: usize| prev.get(i).copied().unwrap_or(0);
        for i in 0..cur.len() {
            let left = if i >= bpp { cur[i - bpp] } else { 0 };
            let (up, up_left) = (up_at(i), if i >= bpp { up_at(i - bpp) } else { 0 });
            cur[i] = match kind {
                1 => cur[i].wrapping_add(left),
                2 => cur[i].wrapping_add(up),
                3 => cur[i].wrapping_add(((u16::from(left) + u16::from(up)) / 2) as u8),
                4 => cur[i].wrapping_add(paeth(left, up, up_left)),
                _ => cur[i],
            };
        }
        out.extend_from_slice(&cur);
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

/// Decodes ASCII85 up to `~>` (or the end), within `limit` bytes: a `z` expands one byte
/// to four, so the output is bounded like every other filter's. Damage (a group over
/// 2^32 - 1, a `z` inside a group, a lone last character, a byte outside the alphabet)
/// ends the data there: what decoded before it is kept, as with the other filters.
pub(crate) fn ascii85(data: &[u8], limit: u64) -> Result<Vec<u8>, Fail> {
    let value = |group: &[u8; 5]| u32::try_from(group.iter().fold(0u64, |acc, &d| acc * 85 + u64::from(d))).ok();
    let mut out = Vec::with_capacity((data.len() * 4 / 5).min(limit as usize));
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
                    let Some(v) = value(&group) else { return Ok(out) };
                    out.extend_from_slice(&v.to_be_bytes());
                    n = 0;
                }
            }
            b if b.is_ascii_whitespace() || b == 0 => {}
            // A `z` inside a group, or a byte outside the alphabet: the damage.
            _ => return Ok(out),
        }
        if out.len() as u64 > limit {
            return Err(too_big());
        }
    }
    // A last group of two to four characters holds one to three bytes; one character holds none.
    if n > 1 {
        group[n..].fill(84);
        if let Some(v) = value(&group) {
            out.extend_from_slice(&v.to_be_bytes()[..n - 1]);
        }
    }
    if out.len() as u64 > limit {
        return Err(too_big());
    }
    Ok(out)
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
        assert_eq!(ascii85(b"<~87cURD]i,\"Ebo80~>", 100).unwrap(), b"Hello World!");
        assert_eq!(ascii85(b"<~87cUR\nD]i,\"E bo80~>", 100).unwrap(), b"Hello World!");
        assert_eq!(ascii85(b"z~>", 100).unwrap(), [0, 0, 0, 0]);
        assert_eq!(run_length(&[2, b'a', b'b', b'c', 254, b'x', 128], 100).unwrap(), b"abcxxx");
    }

    #[test]
    fn png_up_predictor() {
        let mut p = Dictionary::new();
        p.set("Predictor", 12);
        p.set("Columns", 3);
        let data = vec![2, 1, 2, 3, 2, 1, 1, 1];
        assert_eq!(predict(data, Some(&p)).unwrap(), vec![1, 2, 3, 2, 3, 4]);
    }

    fn params(predictor: i64, columns: i64, colors: i64, bits: i64) -> Dictionary {
        let mut p = Dictionary::new();
        p.set("Predictor", predictor);
        p.set("Columns", columns);
        p.set("Colors", colors);
        p.set("BitsPerComponent", bits);
        p
    }

    #[test]
    fn a_predictor_row_over_the_stream_limit_is_refused() {
        // 2^21 columns x 32 colours x 16 bits: a 128 MiB row (before, a 64 MiB row was
        // zero-filled twice for 3 bytes of data, and wider ones were clamped to that).
        for p in [params(12, 1 << 21, 32, 16), params(12, 1 << 40, 1, 8), params(2, i64::MAX, 32, 16)] {
            let err = predict(vec![2, 1, 2], Some(&p)).unwrap_err();
            assert!(matches!(&err, Fail::Invalid(why) if why.contains("predictor rows")), "{err:?}");
        }
    }

    #[test]
    fn predictor_parameters_out_of_range_are_refused() {
        for p in
            [params(12, 0, 1, 8), params(12, 4, 0, 8), params(12, 4, 33, 8), params(12, 4, 1, 3), params(12, 4, 1, 32)]
        {
            let err = predict(vec![2, 1, 2], Some(&p)).unwrap_err();
            assert!(matches!(&err, Fail::Invalid(why) if why.contains("predictor")), "{err:?}");
        }
    }

    #[test]
    fn a_short_last_row_costs_its_own_length() {
        // A row of 1 MiB, and data of 4 bytes: the output is what the data holds.
        let p = params(12, 1 << 20, 1, 8);
        assert_eq!(predict(vec![2, 1, 2, 3], Some(&p)).unwrap(), vec![1, 2, 3]);
        let p = params(2, 1 << 20, 1, 8);
        assert_eq!(predict(vec![1, 1, 1], Some(&p)).unwrap(), vec![1, 2, 3]);
    }

    #[test]
    fn ascii85_output_is_bounded() {
        // 1 MiB of `z` is 4 MiB of zeros: over a 1 MiB limit it is refused, not built.
        let bomb = vec![b'z'; 1 << 20];
        assert!(matches!(ascii85(&bomb, 1 << 20), Err(Fail::Invalid(why)) if why.contains("decompression bomb")));
        assert_eq!(ascii85(&bomb, 4 << 20).unwrap().len(), 4 << 20);
    }

    #[test]
    fn damaged_ascii85_keeps_what_decoded_before_the_damage() {
        // "87cUR" is "Hell"; each input below is damaged after it.
        for input in [&b"87cURuuuuu~>"[..], b"87cUR87cUzR~>", b"87cURD~>", b"87cUR87{cUR~>", b"87cURuuu~>"] {
            assert_eq!(ascii85(input, 100).unwrap(), b"Hell", "{:?}", String::from_utf8_lossy(input));
        }
    }
}
