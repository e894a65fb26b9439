//! Exact token counts with the o200k BPE (GPT-4o and later), data embedded in the binary.
//!
//! The tokenizer is GitHub's `bpe` family: counting is linear in the input, also for
//! one long string that the pre-tokenizer cannot split.

/// Counts the o200k tokens of `text`, in parallel for long texts.
///
/// The count is exact: the text is only split where no o200k pre-token can cross, that
/// is right after a `\n` followed by a character that is neither whitespace nor `/`
/// (the one pattern that runs on past a newline is ` ?[^\s\p{L}\p{N}]+[\r\n/]*`).
pub fn count_tokens(text: &str) -> usize {
    use rayon::prelude::*;
    let parts = rayon::current_num_threads();
    if parts < 2 || text.len() < PARALLEL_MIN_BYTES {
        return count_part(text);
    }
    split_at_safe_points(text, parts * 4).par_iter().map(|part| count_part(part)).sum()
}

/// Counts one part on one thread: the pre-tokenizer's pieces, each through the BPE, with
/// the counts of short pieces remembered (text repeats its words and punctuation, and a
/// lookup is cheaper than a BPE pass). Equal to the tokenizer's own `count`.
fn count_part(text: &str) -> usize {
    let tokenizer = bpe_openai::o200k_base();
    let Some(pre) = tokenizer.pre.as_ref() else { return tokenizer.count(text) };
    let mut seen: rustc_hash::FxHashMap<&str, u32> = rustc_hash::FxHashMap::default();
    let mut total = 0usize;
    for piece in pre.split(text) {
        total += if piece.len() <= 32 {
            *seen.entry(piece).or_insert_with(|| tokenizer.bpe.count(piece.as_bytes()) as u32) as usize
        } else {
            tokenizer.bpe.count(piece.as_bytes())
        };
    }
    total
}

/// Texts shorter than this are counted on one thread.
const PARALLEL_MIN_BYTES: usize = 64 * 1024;

/// Splits `text` into about `parts` pieces at points no pre-token crosses.
fn split_at_safe_points(text: &str, parts: usize) -> Vec<&str> {
    let bytes = text.as_bytes();
    let step = (bytes.len() / parts).max(1);
    let mut out = Vec::with_capacity(parts);
    let mut start = 0;
    let mut at = step;
    while at < bytes.len() {
        let cut = memchr::memchr_iter(b'\n', &bytes[at..])
            .map(|i| at + i + 1)
            .find(|&i| i < bytes.len() && is_safe_start(bytes[i]));
        let Some(cut) = cut else { break };
        if cut > start {
            out.push(&text[start..cut]);
            start = cut;
        }
        at = cut + step;
    }
    out.push(&text[start..]);
    out
}

/// Whether a part may start with this byte: the start of a character that is neither
/// `/` nor whitespace as the regex `\s` sees it (ASCII whitespace includes U+000B, which
/// Rust's `is_ascii_whitespace` leaves out; non-ASCII whitespace such as U+00A0 or U+3000
/// starts with 0xC2, 0xE1, 0xE2 or 0xE3, so those lead bytes are never split before).
fn is_safe_start(b: u8) -> bool {
    match b {
        b'/' | 0x0B => false,
        _ if b.is_ascii_whitespace() => false,
        0x00..=0x7F => true,
        0xC2 | 0xE1 | 0xE2 | 0xE3 => false,
        _ => b >= 0xC0,
    }
}

/// The most leading lines of `text` whose tokens, counted line by line, stay within `limit`.
///
/// Used to tell a model which `limit` would have fit after a page was refused.
pub fn lines_within(text: &str, limit: usize) -> usize {
    let tokenizer = bpe_openai::o200k_base();
    let mut used = 0usize;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        used += tokenizer.count(line);
        if used > limit {
            return i;
        }
    }
    text.split_inclusive('\n').count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_counts() {
        assert_eq!(count_tokens(""), 0);
        assert_eq!(count_tokens("Hello, world!"), 4);
        assert!(count_tokens(&"a".repeat(10_000)) > 0);
    }

    /// The parallel count equals the one-thread count, also where a split could go wrong:
    /// `}\n//`, CRLF, indentation, non-ASCII whitespace after a newline.
    #[test]
    fn parallel_count_is_exact() {
        let tokenizer = bpe_openai::o200k_base();
        let mut text = String::new();
        let pieces = [
            "}\n// comment\n",
            "x = 1;\r\n",
            "\n    indented\n",
            "\n\u{a0}nbsp\n",
            "\n\u{3000}ideo\n",
            "안녕하세요\nสวัสดี\n",
            "a/\n/b\n",
            "\n\n\n",
            "word\n",
            "A\n\x0B    \u{1680}\n\n",
        ];
        for i in 0..60_000 {
            text.push_str(pieces[i % pieces.len()]);
            text.push_str(&i.to_string());
        }
        assert!(text.len() > PARALLEL_MIN_BYTES * 4);
        let mut boundaries = std::collections::HashSet::new();
        let mut at = 0;
        for piece in tokenizer.pre.as_ref().unwrap().split(&text) {
            at += piece.len();
            boundaries.insert(at);
        }
        for parts in [2, 3, 8, 64, 1000] {
            let split = split_at_safe_points(&text, parts);
            assert_eq!(split.concat(), text);
            // Every cut is a boundary between two of the pre-tokenizer's pieces of the whole text.
            let mut cut = 0;
            for part in &split[..split.len() - 1] {
                cut += part.len();
                assert!(boundaries.contains(&cut), "{parts} parts: a pre-token crosses byte {cut}");
            }
            let sum: usize = split.iter().map(|p| tokenizer.count(*p)).sum();
            assert_eq!(sum, tokenizer.count(text.as_str()), "{parts} parts");
        }
        assert_eq!(count_tokens(&text), tokenizer.count(text.as_str()));
    }

    #[test]
    fn lines_within_limit() {
        let text = "hello world\n".repeat(100);
        let per_line = count_tokens("hello world\n");
        assert_eq!(lines_within(&text, per_line * 10), 10);
        assert_eq!(lines_within(&text, usize::MAX), 100);
        assert_eq!(lines_within(&text, 0), 0);
    }
}
