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
    // file is binary. A text file that merely mentions "%PDF-" stays text.
    let start = head.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(head.len());
    let window = &head[..head.len().min(1024)];
    if head[start..].starts_with(b"%PDF-") || (has_nul && memchr::memmem::find(window, b"%PDF-").is_some()) {
        return Kind::Pdf;
    }
    if has_nul {
        return Kind::Binary(binary_type(head));
    }
    if head.starts_with(&[0xEF, 0xBB, 0xBF]) {
        return Kind::Text(TextEncoding::Utf8Bom);
    }
    Kind::Text(TextEncoding::Utf8)
}

fn binary_type(head: &[u8]) -> &'static str {
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
            return name;
        }
    }
    if head.len() >= 12 && &head[4..8] == b"ftyp" {
        return "MP4/QuickTime media";
    }
    if head.len() >= 262 && &head[257..262] == b"ustar" {
        return "tar archive";
    }
    "unknown binary data"
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
    }

    #[test]
    fn nul_after_a_bom_is_binary_and_utf32_is_not_utf16() {
        assert!(matches!(sniff(b"\xEF\xBB\xBFa\0b"), Kind::Binary(_)));
        assert_eq!(sniff(b"\xFF\xFE\0\0h\0\0\0"), Kind::Binary("UTF-32 text (not supported)"));
    }
}
