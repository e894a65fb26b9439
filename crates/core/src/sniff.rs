//! What a file is, decided from its first bytes, never from its name.

/// How a text file's bytes are encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextEncoding {
    /// UTF-8 without a byte-order mark (invalid sequences are decoded lossily).
    Utf8,
    /// UTF-8 with a byte-order mark.
    Utf8Bom,
    /// UTF-16 little endian with a byte-order mark.
    Utf16Le,
    /// UTF-16 big endian with a byte-order mark.
    Utf16Be,
}

impl TextEncoding {
    /// A short stable name: `utf-8`, `utf-8-bom`, `utf-16le`, `utf-16be`.
    pub fn name(self) -> &'static str {
        match self {
            TextEncoding::Utf8 => "utf-8",
            TextEncoding::Utf8Bom => "utf-8-bom",
            TextEncoding::Utf16Le => "utf-16le",
            TextEncoding::Utf16Be => "utf-16be",
        }
    }
}

/// Image formats returned to the model as image blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageFormat {
    /// Portable Network Graphics.
    Png,
    /// JPEG.
    Jpeg,
    /// GIF (the first frame is shown when re-encoding is needed).
    Gif,
    /// WebP.
    WebP,
}

impl ImageFormat {
    /// The MIME type.
    pub fn mime(self) -> &'static str {
        match self {
            ImageFormat::Png => "image/png",
            ImageFormat::Jpeg => "image/jpeg",
            ImageFormat::Gif => "image/gif",
            ImageFormat::WebP => "image/webp",
        }
    }
}

/// What a file is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Text in the given encoding.
    Text(TextEncoding),
    /// An image.
    Image(ImageFormat),
    /// A PDF document.
    Pdf,
    /// Anything else with NUL bytes near its start; the name is a best guess at its type.
    Binary(&'static str),
}

/// How many leading bytes [`sniff`] looks at.
pub const SNIFF_BYTES: usize = 8192;

/// Decides what a file is from its first bytes (up to [`SNIFF_BYTES`]).
pub fn sniff(head: &[u8]) -> Kind {
    let head = &head[..head.len().min(SNIFF_BYTES)];
    if head.starts_with(&[0xFF, 0xFE, 0, 0]) || head.starts_with(&[0, 0, 0xFE, 0xFF]) {
        return Kind::Binary("UTF-32 text (not supported)");
    }
    if head.starts_with(&[0xFF, 0xFE]) {
        return Kind::Text(TextEncoding::Utf16Le);
    }
    if head.starts_with(&[0xFE, 0xFF]) {
        return Kind::Text(TextEncoding::Utf16Be);
    }
    if head.starts_with(b"\x89PNG\r\n\x1a\n") {
        return Kind::Image(ImageFormat::Png);
    }
    if head.starts_with(&[0xFF, 0xD8, 0xFF]) {
        return Kind::Image(ImageFormat::Jpeg);
    }
    if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
        return Kind::Image(ImageFormat::Gif);
    }
    if head.len() >= 12 && &head[0..4] == b"RIFF" && &head[8..12] == b"WEBP" {
        return Kind::Image(ImageFormat::WebP);
    }
    let has_nul = memchr::memchr(0, head).is_some();
    // A PDF starts with its header; readers also accept junk before it, but then the
    // file is binary. A text file that merely mentions "%PDF-" stays text, and an archive
    // (tar, an uncompressed zip entry) that holds a PDF near its start is the archive.
    let start = head.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(head.len());
    let window = &head[..head.len().min(1024)];
    let known = known_binary(head);
    let header =
        memchr::memmem::find_iter(window, b"%PDF-").find(|&at| at == 0 || matches!(head[at - 1], b'\n' | b'\r'));
    // Junk with no NUL (a mail or web server's header): the header on a line of its own,
    // then the binary comment line PDFs have after it (`%` and bytes over 127). A text
    // file in another encoding that quotes a header stays text.
    if head[start..].starts_with(b"%PDF-")
        || (has_nul && known.is_none() && memchr::memmem::find(window, b"%PDF-").is_some())
        || (!has_nul && header.is_some_and(|at| binary_comment_after(head, at)))
    {
        return Kind::Pdf;
    }
    if has_nul {
        return Kind::Binary(known.unwrap_or("unknown binary data"));
    }
    if head.starts_with(&[0xEF, 0xBB, 0xBF]) {
        return Kind::Text(TextEncoding::Utf8Bom);
    }
    Kind::Text(TextEncoding::Utf8)
}

/// Whether the line after the header line at `at` is a PDF's binary comment: `%` and
/// bytes over 127 that are not UTF-8 text (a text file quoting one stays text).
fn binary_comment_after(head: &[u8], at: usize) -> bool {
    let Some(end) = memchr::memchr2(b'\n', b'\r', &head[at..]).map(|n| at + n) else {
        return false;
    };
    let next = head[end..].iter().position(|b| !matches!(b, b'\n' | b'\r')).map_or(head.len(), |n| end + n);
    let rest = &head[next..];
    let line = &rest[..memchr::memchr2(b'\n', b'\r', rest).unwrap_or(rest.len()).min(64)];
    line.first() == Some(&b'%')
        && line.iter().any(|&b| b > 127)
        && std::str::from_utf8(line).is_err_and(|e| e.error_len().is_some())
}

/// The name of a binary format known by its magic bytes.
fn known_binary(head: &[u8]) -> Option<&'static str> {
    const MAGIC: &[(&[u8], &str)] = &[
        (b"\x7fELF", "ELF executable or library"),
        (b"\xcf\xfa\xed\xfe", "Mach-O binary"),
        (b"\xce\xfa\xed\xfe", "Mach-O binary"),
        (b"\xca\xfe\xba\xbe", "Mach-O universal binary or Java class"),
        (b"MZ", "Windows executable (PE)"),
        (b"\0asm", "WebAssembly module"),
        (b"PK\x03\x04", "ZIP archive (also docx, xlsx, jar)"),
        (b"\x1f\x8b", "gzip archive"),
        (b"BZh", "bzip2 archive"),
        (b"\xfd7zXZ\0", "xz archive"),
        (b"\x28\xb5\x2f\xfd", "zstd archive"),
        (b"7z\xbc\xaf\x27\x1c", "7-Zip archive"),
        (b"Rar!\x1a\x07", "RAR archive"),
        (b"SQLite format 3\0", "SQLite database"),
        (b"OggS", "Ogg media"),
        (b"fLaC", "FLAC audio"),
        (b"ID3", "MP3 audio"),
        (b"\x00\x00\x01\x00", "Windows icon"),
        (b"wOFF", "WOFF font"),
        (b"wOF2", "WOFF2 font"),
        (b"\x00\x01\x00\x00\x00", "TrueType font"),
        (b"OTTO", "OpenType font"),
        (b"BM", "BMP image"),
        (b"II*\0", "TIFF image"),
        (b"MM\0*", "TIFF image"),
    ];
    for (magic, name) in MAGIC {
        if head.starts_with(magic) {
            return Some(name);
        }
    }
    if head.len() >= 12 && &head[4..8] == b"ftyp" {
        return Some("MP4/QuickTime media");
    }
    if head.len() >= 262 && &head[257..262] == b"ustar" {
        return Some("tar archive");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_by_content() {
        assert_eq!(sniff(b"hello\n"), Kind::Text(TextEncoding::Utf8));
        assert_eq!(sniff(b""), Kind::Text(TextEncoding::Utf8));
        assert_eq!(sniff(b"\xEF\xBB\xBFhi"), Kind::Text(TextEncoding::Utf8Bom));
        assert_eq!(sniff(b"\xFF\xFEh\0i\0"), Kind::Text(TextEncoding::Utf16Le));
        assert_eq!(sniff(b"\xFE\xFF\0h\0i"), Kind::Text(TextEncoding::Utf16Be));
        assert_eq!(sniff(b"\x89PNG\r\n\x1a\n\0\0"), Kind::Image(ImageFormat::Png));
        assert_eq!(sniff(b"%PDF-1.7\n"), Kind::Pdf);
        assert_eq!(sniff(b"\x7fELF\x02\x01\x01\0"), Kind::Binary("ELF executable or library"));
        assert_eq!(sniff(b"abc\0def"), Kind::Binary("unknown binary data"));
    }

    #[test]
    fn pdf_only_at_the_start_or_in_binary() {
        assert_eq!(sniff(b"\n  %PDF-1.7\n"), Kind::Pdf);
        assert_eq!(sniff(b"junk\0\0%PDF-1.4"), Kind::Pdf);
        assert_eq!(sniff(b"const MAGIC = \"%PDF-\"\n"), Kind::Text(TextEncoding::Utf8));
        // Text junk before the header, then the binary comment line: a PDF.
        let served = b"HTTP/1.1 200 OK\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj";
        assert_eq!(sniff(served), Kind::Pdf);
        // A text file showing a PDF's first lines stays text.
        assert_eq!(sniff("A PDF starts so:\n%PDF-1.7\n%âãÏÓ\n".as_bytes()), Kind::Text(TextEncoding::Utf8));
        assert_eq!(sniff(b"latin-1 caf\xe9, mentions %PDF-1.4 inline\n"), Kind::Text(TextEncoding::Utf8));
        // A Latin-1 text with a header on a line of its own, but no binary comment after it.
        assert_eq!(sniff(b"caf\xe9 notes\n%PDF-1.7\nthe next line\n"), Kind::Text(TextEncoding::Utf8));
    }

    #[test]
    fn nul_after_a_bom_is_binary_and_utf32_is_not_utf16() {
        assert!(matches!(sniff(b"\xEF\xBB\xBFa\0b"), Kind::Binary(_)));
        assert_eq!(sniff(b"\xFF\xFE\0\0h\0\0\0"), Kind::Binary("UTF-32 text (not supported)"));
    }

    /// A tar archive (a 512-byte header, then the member's data) holding `data`.
    fn tar_of(name: &str, data: &[u8]) -> Vec<u8> {
        let mut header = vec![0u8; 512];
        header[..name.len()].copy_from_slice(name.as_bytes());
        header[124..135].copy_from_slice(format!("{:011o}", data.len()).as_bytes());
        header[257..263].copy_from_slice(b"ustar\0");
        [header, data.to_vec()].concat()
    }

    #[test]
    fn an_archive_that_holds_a_pdf_is_the_archive() {
        let pdf = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< >>\nendobj\n";
        assert_eq!(sniff(&tar_of("paper.pdf", pdf)), Kind::Binary("tar archive"));
        // A zip entry stored without compression: local header, name, then the data.
        let mut zip = b"PK\x03\x04\x0a\0\0\0\0\0\0\0\0\0".to_vec();
        zip.extend_from_slice(&[0; 16]);
        zip.extend_from_slice(b"paper.pdf");
        zip.extend_from_slice(pdf);
        assert_eq!(sniff(&zip), Kind::Binary("ZIP archive (also docx, xlsx, jar)"));
        // Binary junk that is no known format before the header is still a PDF.
        assert_eq!(sniff(&[&[0u8, 1, 2, 0][..], pdf].concat()), Kind::Pdf);
    }
}
