//! Rebuilding a damaged cross-reference table, as readers do: every `N G obj` in the
//! file is found by a scan, and a fresh table and trailer are appended after the bytes,
//! so lopdf can load a file whose own table is missing, truncated or wrong.

use memchr::memmem;

/// The largest object number PDF allows (ISO 32000-1, Annex C).
const MAX_OBJECT_NUMBER: u32 = 8_388_607;

/// Every `N G obj` header in the file: object number → (generation, offset). A later
/// definition wins, as an update would.
pub(crate) fn object_offsets(bytes: &[u8]) -> std::collections::BTreeMap<u32, (u16, usize)> {
    let mut objects = std::collections::BTreeMap::new();
    for at in memmem::find_iter(bytes, b"obj") {
        if bytes.get(at + 3).is_some_and(|&b| !is_end(b)) {
            continue;
        }
        if let Some((num, gen, start)) = header_before(bytes, at) {
            // PDF's own limit on object numbers; a larger one is junk (and a table that
            // size would take gigabytes).
            if num <= MAX_OBJECT_NUMBER {
                objects.insert(num, (gen, start));
            }
        }
    }
    objects
}

/// The file with a rebuilt table appended, or `None` when the scan finds no catalog.
pub(crate) fn rebuild(bytes: &[u8]) -> Option<Vec<u8>> {
    let objects = object_offsets(bytes);
    let root = root_of(bytes, &objects)?;
    let mut size = objects.keys().next_back().map_or(1, |&n| n + 1);
    let mut out = Vec::with_capacity(bytes.len() + 20 * size as usize + 256);
    out.extend_from_slice(bytes);
    out.push(b'\n');
    // A catalog written inline in the trailer becomes an object of its own.
    let mut inline_at = None;
    let root = match root {
        Root::Object(n, g) => (n, g),
        Root::Inline(dict) => {
            inline_at = Some(out.len());
            out.extend_from_slice(format!("{size} 0 obj\n").as_bytes());
            out.extend_from_slice(dict);
            out.extend_from_slice(b"\nendobj\n");
            size += 1;
            (size - 1, 0)
        }
    };
    let xref_at = out.len();
    out.extend_from_slice(format!("xref\n0 {size}\n").as_bytes());
    for num in 0..size {
        match objects.get(&num) {
            Some(&(gen, offset)) => out.extend_from_slice(format!("{offset:010} {gen:05} n\r\n").as_bytes()),
            None if num == root.0 && inline_at.is_some() => {
                out.extend_from_slice(format!("{:010} 00000 n\r\n", inline_at.unwrap_or(0)).as_bytes())
            }
            None => out.extend_from_slice(b"0000000000 65535 f\r\n"),
        }
    }
    let mut trailer = format!("trailer\n<< /Size {size} /Root {} {} R", root.0, root.1);
    let old = last_trailer(bytes);
    if let Some(old) = old {
        if let Some((n, g)) = reference_after(old, b"/Encrypt") {
            trailer.push_str(&format!(" /Encrypt {n} {g} R"));
        }
        if let Some(id) = array_after(old, b"/ID") {
            trailer.push_str(" /ID ");
            trailer.push_str(&String::from_utf8_lossy(id));
        }
    }
    trailer.push_str(&format!(" >>\nstartxref\n{xref_at}\n%%EOF\n"));
    out.extend_from_slice(trailer.as_bytes());
    Some(out)
}

fn is_end(b: u8) -> bool {
    b.is_ascii_whitespace() || matches!(b, b'<' | b'[' | b'(' | b'/' | b'%' | b'\0')
}

/// Reads `num gen` just before the `obj` at `at`; returns them and where `num` starts.
fn header_before(bytes: &[u8], at: usize) -> Option<(u32, u16, usize)> {
    let mut i = at;
    let skip_space = |i: &mut usize| {
        while *i > 0 && bytes[*i - 1].is_ascii_whitespace() {
            *i -= 1;
        }
    };
    let digits = |i: &mut usize| -> Option<u64> {
        let end = *i;
        while *i > 0 && bytes[*i - 1].is_ascii_digit() && end - *i < 10 {
            *i -= 1;
        }
        std::str::from_utf8(&bytes[*i..end]).ok()?.parse().ok()
    };
    skip_space(&mut i);
    let gen = digits(&mut i)?;
    let before_gen = i;
    skip_space(&mut i);
    if i == before_gen {
        return None;
    }
    let num = digits(&mut i)?;
    // Anything but a part of a number or a name may come before it: readers find
    // `|1 0 obj` at the end of a binary comment line too.
    if i > 0 && (bytes[i - 1].is_ascii_alphanumeric() || matches!(bytes[i - 1], b'.' | b'+' | b'-' | b'/' | b'#')) {
        return None;
    }
    Some((u32::try_from(num).ok()?, u16::try_from(gen).ok()?, i))
}

/// Where the catalog is.
enum Root<'a> {
    Object(u32, u16),
    /// A dictionary written in the trailer itself.
    Inline(&'a [u8]),
}

/// The catalog: the old trailer's `/Root` if that object was found, or the dictionary
/// the trailer gives inline; else the last object that says `/Type /Catalog`.
fn root_of<'a>(bytes: &'a [u8], objects: &std::collections::BTreeMap<u32, (u16, usize)>) -> Option<Root<'a>> {
    let trailer = last_trailer(bytes);
    if let Some((n, g)) = trailer.and_then(|t| reference_after(t, b"/Root")) {
        if objects.get(&n).is_some_and(|&(gen, _)| gen == g) {
            return Some(Root::Object(n, g));
        }
    }
    if let Some(dict) = trailer.and_then(|t| dict_after(t, b"/Root")) {
        return Some(Root::Inline(dict));
    }
    // The object that holds the last catalog: the one starting last before it.
    let last = [&b"/Type/Catalog"[..], b"/Type /Catalog"].iter().filter_map(|key| memmem::rfind(bytes, key)).max()?;
    let mut starts: Vec<(usize, u32, u16)> = objects.iter().map(|(&n, &(g, off))| (off, n, g)).collect();
    starts.sort_unstable();
    let before = starts.partition_point(|&(off, _, _)| off < last);
    let &(_, n, g) = starts.get(before.checked_sub(1)?)?;
    Some(Root::Object(n, g))
}

/// The `<< … >>` right after `key` in `text`, nested dictionaries and all.
fn dict_after<'a>(text: &'a [u8], key: &[u8]) -> Option<&'a [u8]> {
    let at = memmem::find(text, key)? + key.len();
    let open = at + text[at..].iter().position(|b| !b.is_ascii_whitespace())?;
    if !text[open..].starts_with(b"<<") {
        return None;
    }
    let mut depth = 0usize;
    let mut i = open;
    while i + 1 < text.len() {
        match &text[i..i + 2] {
            b"<<" => {
                depth += 1;
                i += 2;
            }
            b">>" => {
                depth -= 1;
                i += 2;
                if depth == 0 {
                    return Some(&text[open..i]);
                }
            }
            _ => i += 1,
        }
    }
    None
}

/// Whether a classic cross-reference table lists one offset for two objects. lopdf
/// parses the object at that offset once per entry and keeps every copy until it is done,
/// so a table that names one large object thousands of times exhausts memory; such a
/// table is replaced by a rebuilt one.
pub(crate) fn shared_offsets(bytes: &[u8]) -> bool {
    let mut seen = rustc_hash::FxHashSet::default();
    for at in memmem::find_iter(bytes, b"xref") {
        if at > 0 && bytes[at - 1].is_ascii_alphabetic() {
            continue; // startxref
        }
        let body = &bytes[at + 4..];
        let end = memmem::find(body, b"trailer").unwrap_or(body.len());
        let mut words = body[..end].split(|b| b.is_ascii_whitespace()).filter(|w| !w.is_empty());
        while let (Some(_first), Some(count)) = (words.next(), words.next()) {
            let Some(count) = std::str::from_utf8(count).ok().and_then(|c| c.parse::<usize>().ok()) else { break };
            for _ in 0..count.min(end / 18 + 1) {
                let (Some(offset), Some(_gen), Some(kind)) = (words.next(), words.next(), words.next()) else { break };
                if kind == b"n" && offset.iter().any(|&d| d != b'0') && !seen.insert(offset) {
                    return true;
                }
            }
        }
    }
    false
}

/// The text after the last `trailer` keyword.
fn last_trailer(bytes: &[u8]) -> Option<&[u8]> {
    let at = memmem::rfind(bytes, b"trailer")?;
    Some(&bytes[at..bytes.len().min(at + 4096)])
}

/// `N G R` after `key` in `text`.
fn reference_after(text: &[u8], key: &[u8]) -> Option<(u32, u16)> {
    let at = memmem::find(text, key)? + key.len();
    let rest = std::str::from_utf8(&text[at..text.len().min(at + 40)]).ok().or_else(|| {
        let end = text[at..].iter().position(|&b| b > 127).map_or(text.len(), |p| at + p);
        std::str::from_utf8(&text[at..end.min(at + 40)]).ok()
    })?;
    let mut parts = rest.split_ascii_whitespace();
    let n = parts.next()?.parse().ok()?;
    let g = parts.next()?.parse().ok()?;
    (parts.next()?.starts_with('R')).then_some((n, g))
}

/// The `[ … ]` after `key` in `text`.
fn array_after<'a>(text: &'a [u8], key: &[u8]) -> Option<&'a [u8]> {
    let at = memmem::find(text, key)? + key.len();
    let open = at + text[at..].iter().position(|&b| b == b'[')?;
    let close = open + text[open..].iter().position(|&b| b == b']')?;
    Some(&text[open..=close])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_without_a_table_is_rebuilt() {
        let body = b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n2 0 obj <</Type/Pages/Kids[]/Count 0>> endobj\n";
        let fixed = rebuild(body).unwrap();
        let text = String::from_utf8_lossy(&fixed);
        assert!(text.contains("xref\n0 3\n0000000000 65535 f\r\n0000000009 00000 n\r\n"), "{text}");
        assert!(text.contains("/Root 1 0 R"), "{text}");
        assert!(lopdf::Document::load_mem(&fixed).is_ok());
    }

    #[test]
    fn no_catalog_no_rebuild() {
        assert!(rebuild(b"%PDF-1.4\n1 0 obj << >> endobj").is_none());
        assert!(rebuild(b"").is_none());
    }

    #[test]
    fn absurd_object_numbers_are_ignored() {
        let body = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n2147483647 0 obj << >> endobj\n";
        let fixed = rebuild(body).unwrap();
        assert!(fixed.len() < body.len() + 200, "{}", fixed.len());
    }

    #[test]
    fn one_offset_listed_twice_is_found() {
        let table = b"xref\n0 3\n0000000000 65535 f \n0000000017 00000 n \n0000000017 00000 n \ntrailer";
        assert!(shared_offsets(table));
        let fine = b"xref\n0 3\n0000000000 65535 f \n0000000017 00000 n \n0000000081 00000 n \ntrailer\nstartxref\n9";
        assert!(!shared_offsets(fine));
    }

    #[test]
    fn headers_are_read_backwards() {
        let b = b"x\n12 0 obj";
        assert_eq!(header_before(b, 7), Some((12, 0, 2)));
        assert_eq!(header_before(b"endobj", 3), None);
        assert_eq!(header_before(b"a12 0 obj", 6), None);
        // At the end of a binary comment line, as poppler finds it.
        assert_eq!(header_before(b"%\xa0\xf2|1 0 obj", 8), Some((1, 0, 4)));
    }

    /// Issue 22: a file with no table whose trailer gives the catalog inline.
    #[test]
    fn an_inline_catalog_becomes_an_object() {
        let body = b"%PDF-1.4\n2 0 obj <</Type/Pages/Kids[]/Count 0>> endobj\ntrailer\n<< /Root << /Type /Catalog /Pages 2 0 R /Extra << /A 1 >> >> >>\n";
        let fixed = rebuild(body).unwrap();
        let text = String::from_utf8_lossy(&fixed);
        assert!(text.contains("3 0 obj\n<< /Type /Catalog /Pages 2 0 R /Extra << /A 1 >> >>\nendobj"), "{text}");
        assert!(text.contains("/Root 3 0 R"), "{text}");
        let doc = lopdf::Document::load_mem(&fixed).unwrap();
        assert!(doc.catalog().is_ok());
    }
}
